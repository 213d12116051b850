import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { JOB_DELIVERY_RETRIES } from "../../domain/jobs";
import { startFixtureServer, type FixtureServer } from "../e2e/fixtures";
import { startE2E, type Client, type E2E } from "../e2e/harness";
import { bodyOf } from "../support/api-client";
import {
  expectOneUnitPerJob,
  expectOneWebhookPerFinalState,
  startIdempotentReceiver,
  startServiceFront,
  statementsOf,
  type FrontRequest,
  type IdempotentReceiver,
} from "./support";

/**
 * A job's QStash message running out of deliveries before any of them left the job with an
 * encoder: the encoder unreachable, or the Worker refusing every claim, for longer than the
 * message's retries. QStash reports the message to its failure callback, and the job is
 * dispatched again (each lost message one attempt) or, its attempts spent, failed with a
 * readable message; it never stays `queued`. No sweep runs here: the callback alone does it.
 */
let e2e: E2E;
let fixtures: FixtureServer;
let receiver: IdempotentReceiver;
/** Between QStash and the encoder: refusing a delivery is the encoder being unreachable. */
let encoder: Awaited<ReturnType<typeof startServiceFront>>;
/** Between the Worker and its database: refusing the claim's statement is the Worker failing the claim. */
let database: Awaited<ReturnType<typeof startServiceFront>>;
let client: Client;
let secret: string;
const finished: { id: string; status: string }[] = [];
const logs: { source: string; line: string }[] = [];

beforeAll(async () => {
  [fixtures, receiver, encoder, database] = await Promise.all([startFixtureServer(), startIdempotentReceiver(), startServiceFront(), startServiceFront()]);
  e2e = await startE2E({
    allowLoopbackSources: true,
    // A claim the Worker does not take is given up after 1 s, not 2 minutes: the delivery fails sooner.
    env: { WORKER_RETRY_MS: "1000" },
    workerEnv: { ENCODER_URL: encoder.url, NEON_HTTP_ENDPOINT: `${database.url}/sql` },
    // A message's three deliveries within about 1.5 s.
    qstashRetryBaseMs: 500,
    log: (source, line) => logs.push({ source, line }),
  });
  encoder.forwardTo(e2e.stack.info.encoderUrl);
  database.forwardTo(e2e.stack.info.cloud.neonHttp);
  client = await e2e.client();
  secret = (await e2e.admin.setWebhook(client.accountId, receiver.url)).secret;
  await fixtures.source("short.mp4", { seconds: 1, width: 160, height: 90, fps: 15 });
});
afterAll(async () => {
  await e2e?.stop();
  await Promise.all([fixtures?.stop(), receiver?.stop(), encoder?.stop(), database?.stop()]);
});

/** The job and attempt a delivery of a job's message carried. */
const dispatchOf = (req: FrontRequest): { jobId: string; firstAttempt: number } => JSON.parse(req.body);
/** The first attempt of each delivery QStash made of the job's messages, refused or not. */
const deliveriesOf = (jobId: string) =>
  encoder
    .verdicts()
    .filter((v) => dispatchOf(v.request).jobId === jobId)
    .map((v) => ({ firstAttempt: dispatchOf(v.request).firstAttempt, verdict: v.verdict }));

/** The claim's statement: the only one that sets `started_at` (every move returns it). */
const isClaim = (req: FrontRequest) => statementsOf(req).some((s) => /coalesce\(("jobs"\.)?"started_at"/.test(s.query));

const stageLines = (jobId: string) => logs.filter((l) => l.source === "encoder" && l.line.startsWith(`job ${jobId}  `)).map((l) => l.line.slice(`job ${jobId}  `.length));

async function createJob() {
  return bodyOf(await client.createJob({ inputUrl: fixtures.url("short.mp4"), preset: "mp4_264_240p" }), 201).id;
}

async function finish(jobId: string) {
  const job = await e2e.waitFor(client, jobId, undefined, 120_000);
  finished.push({ id: job.id, status: job.status });
  return job;
}

const spent = (lastDelivery: string) =>
  `The job could not be dispatched to an encoder: its last delivery ${lastDelivery}, and its ${JOB_DELIVERY_RETRIES + 1} attempts are spent.`;

describe("a job whose message runs out of deliveries before an encoder takes it", () => {
  it("the encoder unreachable for longer than a message's deliveries: the job is dispatched again, and completes once the encoder is back", async () => {
    encoder.judge(() => "refuse");
    const jobId = await createJob();
    // Its first message lost: the next one starts at attempt 1.
    await e2e.waitFor(client, jobId, (job) => job.retryCount >= 1, 30_000);
    encoder.judge(() => "pass");
    const job = await finish(jobId);
    expect(job, job.errorMessage ?? undefined).toMatchObject({ status: "completed" });
    const deliveries = deliveriesOf(jobId);
    // The first message's three deliveries were all refused; a later message's reached the encoder.
    expect(deliveries.slice(0, 3)).toEqual([0, 0, 0].map((firstAttempt) => ({ firstAttempt, verdict: "refuse" })));
    expect(deliveries.filter((d) => d.verdict === "pass").every((d) => d.firstAttempt >= 1)).toBe(true);
    expect(stageLines(jobId).filter((l) => l.startsWith("claim "))).toHaveLength(1);
  });

  it("the encoder never back: each lost message costs an attempt, and the job fails with a readable message once they are spent", async () => {
    encoder.judge(() => "refuse");
    const jobId = await createJob();
    const job = await finish(jobId);
    encoder.judge(() => "pass");
    expect(job).toMatchObject({ status: "failed", retryCount: JOB_DELIVERY_RETRIES, errorMessage: spent("got no answer"), outputUrl: null });
    // Three messages, starting at attempts 0, 1 and 2, each with the deliveries its attempts allow.
    expect(deliveriesOf(jobId).map((d) => d.firstAttempt)).toEqual([0, 0, 0, 1, 1, 2]);
    expect(deliveriesOf(jobId).every((d) => d.verdict === "refuse")).toBe(true);
  });

  it("the Worker failing every claim: the encoder's deliveries fail, and the job fails the same way, nothing encoded", async () => {
    database.judge((req) => (isClaim(req) ? "refuse" : "pass"));
    const jobId = await createJob();
    const job = await finish(jobId);
    database.judge(() => "pass");
    // The encoder answered each delivery 503 once its claim went untaken.
    expect(job).toMatchObject({ status: "failed", retryCount: JOB_DELIVERY_RETRIES, errorMessage: spent("was answered 503") });
    expect(deliveriesOf(jobId).map((d) => d.firstAttempt)).toEqual([0, 0, 0, 1, 1, 2]);
    const lines = stageLines(jobId);
    expect(lines.filter((l) => /^worker +claim not taken/.test(l)).length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.startsWith("claim "))).toEqual([]);
  });
});

describe("across the jobs above", () => {
  it("one quota unit per job, and one webhook per final state", async () => {
    expect(finished.map((j) => j.status)).toEqual(["completed", "failed", "failed"]);
    await expectOneUnitPerJob(e2e.stack.info.databaseUrl, client.accountId, finished.length);
    await vi.waitFor(() => expect(receiver.accepted().size).toBe(finished.length), { timeout: 30_000, interval: 250 });
    expectOneWebhookPerFinalState(receiver, secret, finished);
  });
});
