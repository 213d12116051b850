import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startEmbeddedPostgres } from "../../dev/cloud/embedded-postgres";
import { startFixtureServer, type FixtureServer } from "../e2e/fixtures";
import { startE2E, type Client, type E2E } from "../e2e/harness";
import { expectOneUnitPerJob, expectOneWebhookPerFinalState, startIdempotentReceiver, type IdempotentReceiver } from "./support";

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
const OUTAGE_MS = 4000;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "faults-postgres-"));
  await chmod(dataDir, 0o755); // as root, PostgreSQL runs as the user postgres
  [postgres, fixtures, receiver] = await Promise.all([
    startEmbeddedPostgres({ dataDir: join(dataDir, "postgres"), host: "127.0.0.1" }),
    startFixtureServer(),
    startIdempotentReceiver(),
  ]);
  e2e = await startE2E({ allowLoopbackSources: true, databaseUrl: postgres.databaseUrl });
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

interface Answer {
  what: string;
  status: number | "hung" | "no answer";
  body: any;
  at: number;
}

async function ask(method: string, path: string, body?: unknown): Promise<Answer> {
  const at = Date.now();
  try {
    const res = await fetch(`${e2e.stack.info.apiUrl}/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${client.key}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(ANSWER_BOUND_MS),
    });
    return { what: `${method} ${path}`, status: res.status, body: await res.json().catch(() => null), at };
  } catch (err) {
    return { what: `${method} ${path}`, status: (err as Error).name === "TimeoutError" ? "hung" : "no answer", body: String(err), at };
  }
}

/** What a cron trigger does every minute in production: the stale-job sweep. */
const cronTick = () => fetch(`${e2e.stack.info.apiUrl}/cdn-cgi/handler/scheduled`).catch(() => undefined);

describe("PostgreSQL restarted under load", () => {
  it("requests get an answer (500 with a requestId while it is down), everything works once it is back, and every job ends", async () => {
    const created: string[] = [];
    const answers: Answer[] = [];
    const createJob = async (source: string) => {
      const answer = await ask("POST", "/jobs", { inputUrl: fixtures.url(source), preset: "mp4_264_240p" });
      answers.push(answer);
      if (answer.status === 201) created.push(answer.body.id);
      return answer;
    };
    // Encodes in flight when the database goes: their heartbeats, reports and redeliveries meet it down.
    for (let i = 0; i < 2; i++) expect((await createJob("in-flight.mp4")).status).toBe(201);

    // Six clients read and list as fast as they are answered; two of them also create a job a second.
    let loading = true;
    const clients = Array.from({ length: 6 }, async (_, n) => {
      let nextCreation = 0;
      while (loading) {
        if (n < 2 && Date.now() >= nextCreation) {
          nextCreation = Date.now() + 1000;
          await createJob("short.mp4");
        }
        answers.push(await ask("GET", `/jobs/${created.at(-1)}`), await ask("GET", "/jobs?limit=5"));
      }
    });

    await new Promise((r) => setTimeout(r, 1500));
    const down = Date.now();
    await postgres.stop();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    postgres = await startEmbeddedPostgres({ dataDir: join(dataDir, "postgres"), host: "127.0.0.1", port: Number(new URL(postgres.databaseUrl).port) });
    const up = Date.now();
    await new Promise((r) => setTimeout(r, 3000));
    loading = false;
    await Promise.all(clients);

    // Every request was answered; anything but a success is the contract's 500 with a requestId.
    expect(answers.filter((a) => typeof a.status !== "number")).toEqual([]);
    const failures = answers.filter((a) => typeof a.status === "number" && a.status >= 300);
    for (const failure of failures) {
      expect(failure, failure.what).toMatchObject({
        status: 500,
        body: { error: "Internal server error", message: expect.any(String), requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      });
    }
    // The outage was real: requests made while the server was down failed.
    expect(failures.filter((a) => a.at >= down && a.at < up).length).toBeGreaterThan(0);

    // Back: creating, reading and listing work again.
    const after = await createJob("short.mp4");
    expect(after.status).toBe(201);
    expect((await ask("GET", `/jobs/${after.body.id}`)).status).toBe(200);
    expect((await ask("GET", "/jobs?limit=100")).status).toBe(200);

    // Every job ends completed or failed, none stuck (the sweep runs as the cron would run it).
    const cron = setInterval(cronTick, 5000);
    try {
      const jobs = await Promise.all(created.map((id) => e2e.waitFor(client, id, undefined, 240_000)));
      for (const job of jobs) expect(["completed", "failed"], `${job.id}: ${job.errorMessage}`).toContain(job.status);
      await expectOneUnitPerJob(e2e.stack.info.databaseUrl, client.accountId, created.length);
      const notified = () => new Set([...receiver.accepted().values()].map((payload) => payload.jobId));
      await vi.waitFor(() => expect(jobs.filter((j) => !notified().has(j.id))).toEqual([]), { timeout: 120_000, interval: 500 });
      expectOneWebhookPerFinalState(receiver, secret, jobs);
    } finally {
      clearInterval(cron);
    }
  });
});
