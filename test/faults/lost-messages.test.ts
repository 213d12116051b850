import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { MAX_INTERRUPTIONS } from "../../domain/jobs";
import { INTERRUPTED_MESSAGE } from "../../worker/lib/job-states";
import { DISPATCH_RETRIES } from "../../worker/services/queue";
import { bodyOf } from "../support/api-client";
import { startFaultStack, type FaultStack } from "./stack";
import {
  expectOneUnitPerJob,
  expectOneWebhookPerFinalState,
  isClaim,
  startServiceFront,
  type FrontRequest,
} from "./support";

/**
 * A job's QStash message running out of deliveries before any of them left the job with an
 * encoder: the encoder unreachable, or the Worker refusing every claim, for longer than the
 * message's retries. QStash reports the message to its failure callback, and the job is
 * dispatched again (each lost message an interruption, not an attempt at the source) or, its
 * interruptions spent, failed with a readable message; it never stays `queued`. No sweep runs
 * here: the callback alone does it.
 */
let stack: FaultStack;
/** Between QStash and the encoder: refusing a delivery is the encoder being unreachable. */
let encoder: Awaited<ReturnType<typeof startServiceFront>>;
/** Between the Worker and its database: refusing the claim's statement is the Worker failing the claim. */
let database: Awaited<ReturnType<typeof startServiceFront>>;
const finished: { id: string; status: string }[] = [];

beforeAll(async () => {
  [encoder, database] = await Promise.all([startServiceFront(), startServiceFront()]);
  stack = await startFaultStack(
    {
      // A claim the Worker does not take is given up after 1 s, not 2 minutes: the delivery fails sooner.
      env: { WORKER_RETRY_MS: "1000" },
      workerEnv: { ENCODER_URL: encoder.url, NEON_HTTP_ENDPOINT: `${database.url}/sql` },
      // A message's four deliveries within about 3.5 s.
      qstashRetryBaseMs: 500,
    },
    (info) => {
      encoder.forwardTo(info.encoderUrl);
      database.forwardTo(info.cloud.neonHttp);
    },
  );
  await stack.fixtures.source("short.mp4", { seconds: 1, width: 160, height: 90, fps: 15 });
});
afterAll(async () => {
  await stack?.stop();
  await Promise.all([encoder?.stop(), database?.stop()]);
});

/** The job and dispatch a delivery of a job's message carried. */
const dispatchOf = (req: FrontRequest): { jobId: string; dispatch: number } => JSON.parse(req.body);
/** The dispatch of each delivery QStash made of the job's messages, refused or not. */
const deliveriesOf = (jobId: string) =>
  encoder
    .verdicts()
    .filter((v) => dispatchOf(v.request).jobId === jobId)
    .map((v) => ({ dispatch: dispatchOf(v.request).dispatch, verdict: v.verdict }));
/** Every dispatch a job gets before its interruptions are spent, each delivered as often as its message allows. */
const everyDelivery = Array.from({ length: MAX_INTERRUPTIONS + 1 }, (_, dispatch) =>
  Array<number>(DISPATCH_RETRIES + 1).fill(dispatch),
).flat();

const stageLines = (jobId: string) => stack.stageLines(jobId);

async function createJob() {
  return bodyOf(
    await stack.client.createJob({ inputUrl: stack.fixtures.url("short.mp4"), preset: "mp4_264_240p" }),
    201,
  ).id;
}

async function finish(jobId: string) {
  const job = await stack.e2e.waitFor(stack.client, jobId, undefined, 120_000);
  finished.push({ id: job.id, status: job.status });
  return job;
}

const spent = (lastDelivery: string) =>
  `The job could not be dispatched to an encoder: its last delivery ${lastDelivery}. ${INTERRUPTED_MESSAGE}`;

describe("a job whose message runs out of deliveries before an encoder takes it", () => {
  it("the encoder unreachable for longer than a message's deliveries: the job is dispatched again, and completes once the encoder is back", async () => {
    encoder.judge(() => "refuse");
    const jobId = await createJob();
    // Its first message lost: the job's next dispatch is delivered.
    await vi.waitFor(() => expect(deliveriesOf(jobId).some((d) => d.dispatch >= 1)).toBe(true), { timeout: 30_000 });
    encoder.judge(() => "pass");
    const job = await finish(jobId);
    // An encoder out of reach is not the source's fault: no attempt at it was spent.
    expect(job, job.errorMessage ?? undefined).toMatchObject({ status: "completed", retryCount: 0 });
    const deliveries = deliveriesOf(jobId);
    // The first message's deliveries were all refused; a later message's reached the encoder.
    expect(deliveries.slice(0, DISPATCH_RETRIES + 1)).toEqual(
      Array.from({ length: DISPATCH_RETRIES + 1 }, () => ({ dispatch: 0, verdict: "refuse" })),
    );
    expect(deliveries.filter((d) => d.verdict === "pass").every((d) => d.dispatch >= 1)).toBe(true);
    expect(stageLines(jobId).filter((l) => l.startsWith("claim "))).toHaveLength(1);
  });

  it("the encoder never back: each lost message is an interruption, and the job fails with a readable message once they are spent", async () => {
    encoder.judge(() => "refuse");
    const jobId = await createJob();
    const job = await finish(jobId);
    encoder.judge(() => "pass");
    expect(job).toMatchObject({
      status: "failed",
      retryCount: 0,
      errorMessage: spent("got no answer"),
      outputUrl: null,
    });
    expect(deliveriesOf(jobId).map((d) => d.dispatch)).toEqual(everyDelivery);
    expect(deliveriesOf(jobId).every((d) => d.verdict === "refuse")).toBe(true);
  });

  it("the Worker failing every claim: the encoder's deliveries fail, and the job fails the same way, nothing encoded", async () => {
    database.judge((req) => (isClaim(req) ? "refuse" : "pass"));
    const jobId = await createJob();
    const job = await finish(jobId);
    database.judge(() => "pass");
    // The encoder answered each delivery 503 once its claim went untaken.
    expect(job).toMatchObject({
      status: "failed",
      retryCount: 0,
      errorMessage: spent("was answered 503"),
    });
    expect(deliveriesOf(jobId).map((d) => d.dispatch)).toEqual(everyDelivery);
    const lines = stageLines(jobId);
    expect(lines.filter((l) => /^worker +on \S+ +claim not taken/.test(l)).length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.startsWith("claim "))).toEqual([]);
  });
});

describe("across the jobs above", () => {
  it("one quota unit per job, and one webhook per final state", async () => {
    expect(finished.map((j) => j.status)).toEqual(["completed", "failed", "failed"]);
    await expectOneUnitPerJob(stack.e2e.stack.info.databaseUrl, stack.client.accountId, finished.length);
    await vi.waitFor(() => expect(stack.receiver.accepted().size).toBe(finished.length), {
      timeout: 30_000,
      interval: 250,
    });
    expectOneWebhookPerFinalState(stack.receiver, stack.secret, finished);
  });
});
