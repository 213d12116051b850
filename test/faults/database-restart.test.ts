import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startEmbeddedPostgres } from "../../dev/cloud/embedded-postgres";
import { startFixtureServer, type FixtureServer } from "../e2e/fixtures";
import { startE2E, type Client, type E2E } from "../e2e/harness";
import { type Answer, type ApiClient, bodyOf, createApiClient, fetchExchange } from "../support/api-client";
import {
  expectOneUnitPerJob,
  expectOneWebhookPerFinalState,
  startIdempotentReceiver,
  type IdempotentReceiver,
} from "./support";

/**
 * PostgreSQL stopped (a fast shutdown: sessions ended mid-query) and started again on the same
 * port while clients create, read and list jobs and the encoder has jobs in flight. A stack of
 * its own on an embedded PostgreSQL (the machine's server is everyone's): every request is
 * answered, a failure with the contract's 500 and a requestId, never a hang; once the server
 * is back everything works again, and every job ends completed or failed.
 */
let dataDir: string;
let postgres: Awaited<ReturnType<typeof startEmbeddedPostgres>>;
let e2e: E2E;
let fixtures: FixtureServer;
let receiver: IdempotentReceiver;
let client: Client;
let secret: string;

/** A request that takes longer than this counts as hung. */
const ANSWER_BOUND_MS = 30_000;
/** What the Worker logged: only its error lines (a 500's) name a request's path. */
const workerLines: string[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "faults-postgres-"));
  await chmod(dataDir, 0o755); // as root, PostgreSQL runs as the user postgres
  [postgres, fixtures, receiver] = await Promise.all([
    startEmbeddedPostgres({ dataDir: join(dataDir, "postgres"), host: "127.0.0.1" }),
    startFixtureServer(),
    startIdempotentReceiver(),
  ]);
  e2e = await startE2E({
    allowLoopbackSources: true,
    databaseUrl: postgres.databaseUrl,
    log: (source, line) => source === "worker" && workerLines.push(line),
  });
  client = await e2e.client();
  secret = (await e2e.admin.setWebhook(client.accountId, receiver.url)).secret;
  await Promise.all([
    fixtures.source("short.mp4", { seconds: 1, width: 160, height: 90, fps: 15 }),
    fixtures.source("in-flight.mp4", { seconds: 20, width: 640, height: 360 }),
  ]);
});
afterAll(async () => {
  await e2e?.stop();
  await postgres?.stop();
  await fixtures?.stop();
  await receiver?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

interface Asked {
  what: string;
  status: number | "hung" | "no answer";
  body: unknown;
  at: number;
}

/** The client's request, its answer or why there was none, and when it was sent. */
async function ask(what: string, request: (api: ApiClient) => Promise<Answer>): Promise<Asked> {
  const at = Date.now();
  const api = createApiClient({
    baseUrl: e2e.stack.info.apiUrl,
    apiKey: client.key,
    exchange: fetchExchange(undefined, { timeoutMs: ANSWER_BOUND_MS }),
  });
  try {
    const res = await request(api);
    return { what, status: res.status, body: res.body, at };
  } catch (err) {
    return { what, status: (err as Error).name === "TimeoutError" ? "hung" : "no answer", body: String(err), at };
  }
}

/** Whether the Worker logged a failed request to this path among its lines from `since` on. */
const failedSince = (since: number, path: string) =>
  workerLines.slice(since).some((line) => line.includes(`"path":"${path}"`));

/** What a cron trigger does every minute in production: the stale-job sweep. */
const cronTick = () => fetch(`${e2e.stack.info.apiUrl}/cdn-cgi/handler/scheduled`).catch(() => undefined);

describe("PostgreSQL restarted under load", () => {
  it("requests get an answer (500 with a requestId while it is down), everything works once it is back, and every job ends", async () => {
    const created: string[] = [];
    const answers: Asked[] = [];
    const createJob = async (source: string) => {
      const answer = await ask("POST /jobs", (api) =>
        api.createJob({ inputUrl: fixtures.url(source), preset: "mp4_264_240p" }),
      );
      answers.push(answer);
      if (answer.status === 201) created.push((answer.body as { id: string }).id);
      return answer;
    };
    // Encodes in flight when the database goes: their heartbeats, reports and redeliveries meet it down.
    for (let i = 0; i < 2; i++) expect((await createJob("in-flight.mp4")).status).toBe(201);
    const inFlight = [...created];

    // Six clients read and list as fast as they are answered; two of them also create a job a second.
    let loading = true;
    const clients = Array.from({ length: 6 }, async (_, n) => {
      let nextCreation = 0;
      while (loading) {
        if (n < 2 && Date.now() >= nextCreation) {
          nextCreation = Date.now() + 1000;
          await createJob("short.mp4");
        }
        const id = created.at(-1)!;
        answers.push(
          await ask(`GET /jobs/${id}`, (api) => api.getJob(id)),
          await ask("GET /jobs?limit=5", (api) => api.listJobs({ limit: 5 })),
        );
      }
    });

    // The database goes once both encodes have started and the load has been answered, while the encodes still run.
    for (const id of inFlight) await e2e.waitFor(client, id, (job) => job.status !== "queued", 60_000);
    await vi.waitFor(() => expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(10), {
      timeout: 30_000,
      interval: 50,
    });
    for (const id of inFlight)
      expect(bodyOf(await client.getJob(id), 200).status, `${id} still encoding when the database goes`).toBe(
        "processing",
      );
    const down = Date.now();
    const linesAtDown = workerLines.length;
    await postgres.stop();
    // Down until the load's requests have failed, and each encode's heartbeat or report has met the outage.
    await vi.waitFor(
      () => {
        expect(answers.some((a) => a.at >= down && a.status === 500)).toBe(true);
        for (const id of inFlight)
          expect(
            failedSince(linesAtDown, `/internal/jobs/${id}/heartbeat`) ||
              failedSince(linesAtDown, `/internal/jobs/${id}/complete`),
            id,
          ).toBe(true);
      },
      { timeout: 60_000, interval: 100 },
    );
    postgres = await startEmbeddedPostgres({
      dataDir: join(dataDir, "postgres"),
      host: "127.0.0.1",
      port: Number(new URL(postgres.databaseUrl).port),
    });
    const up = Date.now();
    // The load runs on until it is answered again: a job created and read after the restart.
    await vi.waitFor(
      () => expect(answers.some((a) => a.at >= up && a.what.startsWith("GET /jobs/") && a.status === 200)).toBe(true),
      { timeout: 60_000, interval: 100 },
    );
    loading = false;
    await Promise.all(clients);

    // Every request was answered; anything but a success is the contract's 500 with a requestId.
    expect(answers.filter((a) => typeof a.status !== "number")).toEqual([]);
    const failures = answers.filter((a) => typeof a.status === "number" && a.status >= 300);
    for (const failure of failures) {
      expect(failure, failure.what).toMatchObject({
        status: 500,
        body: {
          error: "Internal server error",
          message: expect.any(String),
          requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        },
      });
    }
    // The outage was real: requests made while the server was down failed.
    expect(failures.filter((a) => a.at >= down && a.at < up).length).toBeGreaterThan(0);

    // Back: creating, reading and listing work again.
    const after = await createJob("short.mp4");
    expect(after.status).toBe(201);
    const afterId = (after.body as { id: string }).id;
    expect((await ask(`GET /jobs/${afterId}`, (api) => api.getJob(afterId))).status).toBe(200);
    expect((await ask("GET /jobs?limit=100", (api) => api.listJobs({ limit: 100 }))).status).toBe(200);

    // Every job ends completed or failed, none stuck (the sweep runs as the cron would run it).
    const cron = setInterval(cronTick, 5000);
    try {
      const jobs = await Promise.all(created.map((id) => e2e.waitFor(client, id, undefined, 240_000)));
      for (const job of jobs) expect(["completed", "failed"], `${job.id}: ${job.errorMessage}`).toContain(job.status);
      await expectOneUnitPerJob(e2e.stack.info.databaseUrl, client.accountId, created.length);
      const notified = () => new Set([...receiver.accepted().values()].map((payload) => payload.jobId));
      await vi.waitFor(() => expect(jobs.filter((j) => !notified().has(j.id))).toEqual([]), {
        timeout: 120_000,
        interval: 500,
      });
      expectOneWebhookPerFinalState(receiver, secret, jobs);
    } finally {
      clearInterval(cron);
    }
  });
});
