import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { Socket } from "node:net";
import pg from "pg";
import { Webhook } from "standardwebhooks";
import { expect } from "vitest";

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
}

function trackSockets(server: Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return sockets;
}

async function close(server: Server, sockets: Set<Socket>) {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

interface Delivery {
  id: string;
  body: string;
  headers: Record<string, string>;
  answered: number;
}

/**
 * A webhook receiver written as receivers are told to write them: idempotent, keyed by
 * `webhook-id`. It is also a struggling one: the first delivery of each id is answered 500,
 * the next 200. `accepted()` is what its application would act on: one payload per id.
 */
export async function startIdempotentReceiver() {
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const id = String(req.headers["webhook-id"]);
      const answered = deliveries.some((d) => d.id === id) ? 200 : 500;
      deliveries.push({ id, body, headers: req.headers as Record<string, string>, answered });
      res.writeHead(answered).end();
    });
  });
  const sockets = trackSockets(server);
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    deliveries: () => [...deliveries],
    /** The payload of every webhook-id answered 2xx, the first time it was. */
    accepted(): Map<string, { jobId: string; event: string; status: string }> {
      const accepted = new Map<string, { jobId: string; event: string; status: string }>();
      for (const d of deliveries) if (d.answered === 200 && !accepted.has(d.id)) accepted.set(d.id, JSON.parse(d.body));
      return accepted;
    },
    stop: () => close(server, sockets),
  };
}

export type IdempotentReceiver = Awaited<ReturnType<typeof startIdempotentReceiver>>;

/**
 * The webhook side of the campaign's invariants, for the jobs one account made: every delivery
 * is signed with the account's secret; each job's final state was accepted exactly once, its
 * first (refused) delivery retried under the same webhook-id; nothing was delivered again
 * once accepted.
 */
export function expectOneWebhookPerFinalState(
  receiver: IdempotentReceiver,
  secret: string,
  jobs: { id: string; status: string }[],
) {
  const deliveries = receiver.deliveries();
  for (const d of deliveries) expect(() => new Webhook(secret).verify(d.body, d.headers), d.id).not.toThrow();
  const accepted = [...receiver.accepted().values()];
  for (const job of jobs) {
    const forJob = accepted.filter((payload) => payload.jobId === job.id);
    expect(forJob, job.id).toEqual([
      expect.objectContaining({ jobId: job.id, status: job.status, event: `job.${job.status}` }),
    ]);
    const ids = new Set(deliveries.filter((d) => JSON.parse(d.body).jobId === job.id).map((d) => d.id));
    expect(ids.size, job.id).toBe(1);
  }
  for (const [id] of receiver.accepted()) {
    expect(
      deliveries.filter((d) => d.id === id).map((d) => d.answered),
      id,
    ).toEqual([500, 200]);
  }
}

/** `run` on the stack's database, through a connection of its own. */
export async function onDatabase<T>(databaseUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * The quota side: the account's usage counter holds exactly one unit per job that holds one
 * (every job but those whose creation failed and returned its unit), so no unit was counted
 * twice or lost.
 */
export async function expectOneUnitPerJob(databaseUrl: string, accountId: string, created: number) {
  await onDatabase(databaseUrl, async (client) => {
    const usage = await client.query("select coalesce(sum(count), 0)::int as units from usage where account_id = $1", [
      accountId,
    ]);
    const jobs = await client.query(
      "select count(*)::int as holding from jobs where account_id = $1 and coalesce(error_message, '') not like 'The job could not be queued%'",
      [accountId],
    );
    expect(usage.rows[0].units).toBe(jobs.rows[0].holding);
    expect(jobs.rows[0].holding).toBeGreaterThanOrEqual(created);
  });
}

/**
 * A front between the encoder and the S3 server that can refuse: `answer503` answers every
 * request 503 SlowDown, `close` drops every connection without an answer; `pass` forwards
 * requests unchanged (the Host header too, so SigV4 signatures still verify behind it).
 */
type StorageVerdict = "pass" | "answer503" | "answer403" | "close";

export async function startStorageFront() {
  let target: URL | undefined;
  let judge: (req: IncomingMessage) => StorageVerdict = () => "pass";
  const refused = { answer503: 0, answer403: 0, close: 0 };
  const server = createServer((req, res) => {
    const mode = judge(req);
    if (mode === "close") {
      refused.close += 1;
      req.socket.destroy();
      return;
    }
    if (mode === "answer503") {
      refused.answer503 += 1;
      req.resume();
      res.writeHead(503, { "content-type": "application/xml" }).end("<Error><Code>SlowDown</Code></Error>");
      return;
    }
    if (mode === "answer403") {
      refused.answer403 += 1;
      req.resume();
      res.writeHead(403, { "content-type": "application/xml" }).end("<Error><Code>AccessDenied</Code></Error>");
      return;
    }
    const upstream = request(
      { host: target!.hostname, port: target!.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  const sockets = trackSockets(server);
  const port = await listen(server);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    /** Where `pass` forwards to: the S3 server, known once the stack behind the encoder runs. */
    forwardTo(endpoint: string) {
      target = new URL(endpoint);
    },
    set(next: StorageVerdict) {
      judge = () => next;
      // Pooled connections from before would otherwise carry on in the old mode's spirit.
      for (const socket of sockets) socket.destroy();
    },
    /** Each request's fate decided by `next`, from the next request on. */
    judge(next: (req: IncomingMessage) => StorageVerdict) {
      judge = next;
    },
    refused: () => ({ ...refused }),
    stop: () => close(server, sockets),
  };
}

/** What a service front does with one request: forward it, refuse it unforwarded, or forward it and lose the answer. */
export type FrontVerdict =
  | "pass"
  | "refuse"
  | "lose-answer"
  | { loseAnswerOnce: Promise<unknown> }
  | { holdAnswerUntil: Promise<unknown> };

export interface FrontRequest {
  method: string;
  url: string;
  body: string;
}

/**
 * A front between the Worker and one of its services (the Neon HTTP endpoint, QStash) that fails
 * the requests `judge` picks, at the moment they are made: `refuse` drops the connection before
 * anything reaches the service (the service was unreachable); `lose-answer` lets the service do
 * the work and drops the connection instead of its answer (the Worker cannot tell it was done);
 * `loseAnswerOnce` does the same once the promise settles, holding the answer until then;
 * `holdAnswerUntil` holds the answer until the promise settles, then gives it.
 */
export async function startServiceFront() {
  let target: URL | undefined;
  let judge: (req: FrontRequest) => FrontVerdict = () => "pass";
  const verdicts: { request: FrontRequest; verdict: FrontVerdict }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const request = {
        method: req.method ?? "GET",
        url: req.url ?? "/",
        body: Buffer.concat(chunks).toString("utf8"),
      };
      const verdict = judge(request);
      verdicts.push({ request, verdict });
      if (verdict === "refuse") return req.socket.destroy();
      const upstream = forward(target!, req, Buffer.concat(chunks), (answer) => {
        if (typeof verdict === "object" && "holdAnswerUntil" in verdict) {
          const held: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => held.push(chunk));
          answer.on(
            "end",
            () =>
              void verdict.holdAnswerUntil.finally(() =>
                res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(held)),
              ),
          );
          return;
        }
        if (verdict === "lose-answer" || typeof verdict === "object") {
          const until = typeof verdict === "object" ? verdict.loseAnswerOnce : Promise.resolve();
          answer.resume();
          answer.on("end", () => void until.finally(() => req.socket.destroy()));
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", () => res.destroy());
    });
  });
  const sockets = trackSockets(server);
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    /** Where requests go: the service, known once the stack behind the front runs. */
    forwardTo(url: string) {
      target = new URL(url);
    },
    judge(next: (req: FrontRequest) => FrontVerdict) {
      judge = next;
    },
    /** Every request seen, with what was done to it. */
    verdicts: () => [...verdicts],
    stop: () => close(server, sockets),
  };
}

/** The statements of one request to the Neon HTTP endpoint (one, or a batch). */
export function statementsOf(req: FrontRequest): { query: string; params: unknown[] }[] {
  try {
    const payload = JSON.parse(req.body);
    return payload.queries ?? [payload];
  } catch {
    return [];
  }
}

/** The encoder's claim as it reaches the database: the only move that sets `started_at` (lib/job-states/claims.ts; every move returns it). */
export const isClaim = (req: FrontRequest) =>
  statementsOf(req).some((s) => /coalesce\(("jobs"\.)?"started_at"/.test(s.query));

/** `req` with its body sent on to `target` (Host rewritten to it). */
function forward(target: URL, req: IncomingMessage, body: Buffer, onAnswer: (answer: IncomingMessage) => void) {
  const upstream = request(
    {
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host: target.host },
    },
    onAnswer,
  );
  upstream.end(body);
  return upstream;
}
