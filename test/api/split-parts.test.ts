import { and, asc, eq, isNotNull } from "drizzle-orm";
import { afterAll, describe, expect, it, vi } from "vitest";
import { jobParts, jobs, usage } from "../../drizzle/schema";
import { DISPATCH_RETRY_DELAY, MAX_INTERRUPTIONS } from "../../domain/jobs";
import { audioInputKey, PART_ATTEMPTS, partInputKey, partOutputKey, type SplitPlan } from "../../domain/split";
import { workerVars } from "../../dev/worker-vars";
import * as jobStates from "../../worker/lib/job-states";
import { deleteScratch } from "../../worker/lib/split-jobs";
import { openServices } from "../../worker/services";
import { AUDIO_TASK_WEIGHT, PART_INTERRUPTED_MESSAGE } from "../../worker/lib/part-states";
import { bodyOf, expectStatus } from "../support/api-client";
import { startWebhookReceiver } from "../support/webhook-receiver";
import {
  admin,
  api,
  createJob,
  internal,
  messageOf,
  newAccount,
  objectUrl,
  qstash,
  readJob,
  s3,
  SOURCE,
  signedInternal,
  stack,
} from "./harness";

/**
 * A split job's parts and join through the internal API (docs/scaling.md), against the Worker,
 * the database, the local QStash and S3. The encoder's side is played here, call by call.
 */

const hooks = await startWebhookReceiver();
afterAll(() => hooks.stop());

/** A plan of `n` parts of 30 s at 25 fps, with or without audio (its task follows the parts). */
function planOf(n: number, audio = false): SplitPlan {
  const frames = 750;
  return {
    fps: { num: 25, den: 1 },
    height: 720,
    width: 1280,
    sampleAspect: 1,
    totalFrames: n * frames,
    gopFrames: 50,
    parts: Array.from({ length: n }, (_, i) => ({
      index: i,
      firstFrame: i * frames,
      frameCount: frames,
      from: i * 30,
      to: (i + 1) * 30,
    })),
    audio,
    audioStart: 0,
  };
}

async function put(key: string) {
  const res = await s3.fetch(objectUrl(key), { method: "PUT", body: `bytes of ${key}` });
  if (!res.ok) throw new Error(`upload of ${key} failed: ${res.status}`);
}

const stored = async (key: string) => (await s3.fetch(objectUrl(key), { method: "HEAD" })).status === 200;

/**
 * Waits until the job's scratch is gone from storage, as the Worker deletes it after its answer;
 * then, the grace passed (its mark made older), the sweep deletes it once more and settles it.
 */
async function scratchDeleted(jobId: string, keys: string[]) {
  await vi.waitFor(
    async () => {
      for (const key of keys) expect(await stored(key), key).toBe(false);
    },
    { timeout: 10_000, interval: 100 },
  );
  await admin.db
    .update(jobs)
    .set({ scratchPendingSince: new Date(Date.now() - 60_000) })
    .where(and(eq(jobs.id, jobId), isNotNull(jobs.scratchPendingSince)));
  expectStatus(await internal("/sweep", {}), 200);
  expect((await row(jobId)).scratchPendingSince).toBeNull();
}

const row = async (jobId: string) => (await admin.db.select().from(jobs).where(eq(jobs.id, jobId)))[0];
const partsOf = (jobId: string) =>
  admin.db.select().from(jobParts).where(eq(jobParts.jobId, jobId)).orderBy(asc(jobParts.index));

/**
 * Plays the split stage: creation, the job's claim, the parts' pieces and audio in storage, the
 * plan handed over. Returns the job, its account and the scratch keys it stored.
 */
async function splitJob(parts: number, options: { webhook?: boolean; audio?: boolean; plan?: SplitPlan } = {}) {
  const audio = options.audio ?? false;
  const account = await newAccount();
  if (options.webhook) await admin.setWebhook(account.accountId, hooks.url);
  const job = await createJob(account.apiKey, "mp4_264_720p");
  const claimed = bodyOf(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 }), 200);
  const keys = [
    ...Array.from({ length: parts }, (_, i) => partInputKey(job.id, i)),
    ...(audio ? [audioInputKey(job.id)] : []),
  ];
  await Promise.all(keys.map(put));
  const plan = options.plan ?? planOf(parts, audio);
  const split = await internal(`/jobs/${job.id}/split`, { claim: claimed.job?.claim, plan });
  expect(bodyOf(split, 200)).toEqual({ parts: parts + (audio ? 1 : 0) });
  return { ...account, jobId: job.id, keys };
}

const part = (jobId: string, index: number, call: string, body: unknown) =>
  internal(`/jobs/${jobId}/parts/${index}/${call}`, body);

/** Claims the part with its current dispatch; answers the claim's lease. */
async function claimPart(jobId: string, index: number) {
  const { dispatch } = (await partsOf(jobId))[index];
  const claimed = bodyOf(await part(jobId, index, "claim", { dispatch }), 200);
  return claimed.claim as number;
}

/** Plays a part's encoder to the end: claim, output uploaded, completion. */
async function completePart(jobId: string, index: number, claim?: number) {
  const lease = claim ?? (await claimPart(jobId, index));
  const outputKey = partOutputKey(jobId, index);
  await put(outputKey);
  return part(jobId, index, "complete", { claim: lease, outputKey });
}

/** A message published to the delivery sink and held back, recorded as the part's: a message still queued when the job ends. */
async function heldMessage(jobId: string, index: number) {
  const { messageId } = await qstash.publishJSON({
    url: `${stack.encoderUrl}/deliveries/jobs`,
    body: { jobId, dispatch: 0, part: index },
    delay: 600,
  });
  await admin.db
    .update(jobParts)
    .set({ messageId })
    .where(and(eq(jobParts.jobId, jobId), eq(jobParts.index, index)));
  return messageId;
}

describe("split encoding › the split hands the parts over", () => {
  it("records the plan, queues a part per part and publishes each under the parts' flow control; sent again, answers the same", async () => {
    const { jobId, apiKey } = await splitJob(3);
    const job = await row(jobId);
    expect(job).toMatchObject({ status: "processing", stage: "parts", dispatch: 1, split: planOf(3) });
    const parts = await partsOf(jobId);
    expect(parts.map((p) => [p.index, p.firstFrame, p.frameCount, p.state, p.dispatch])).toEqual([
      [0, 0, 750, "queued", 0],
      [1, 750, 750, "queued", 0],
      [2, 1500, 750, "queued", 0],
    ]);
    for (const p of parts) {
      const message = await messageOf(p.messageId as string);
      expect(JSON.parse(message.body)).toEqual({ jobId, dispatch: 0, part: p.index });
      // The pool's: the api stack's 8 Machines that take deliveries (setup/pool.ts), less the 2 whole
      // jobs', as Fly's Machines API lists them; redelivered within seconds, as a job is.
      expect(message).toMatchObject({ flowControlKey: "parts", parallelism: 6, retryDelay: DISPATCH_RETRY_DELAY });
    }
    // The same split again (its answer lost): the same answer, nothing added.
    expect(bodyOf(await internal(`/jobs/${jobId}/split`, { claim: 1, plan: planOf(3) }), 200)).toEqual({ parts: 3 });
    expect(await partsOf(jobId)).toHaveLength(3);
    // The whole job's claim no longer works on it: its beats are refused, and its message is spent.
    expect(await internal(`/jobs/${jobId}/heartbeat`, { claim: 1, progress: 0.5 })).toMatchObject({
      status: 409,
      body: { status: "processing" },
    });
    expect(await internal(`/jobs/${jobId}/claim`, { dispatch: 0 })).toMatchObject({ status: 409 });
    // GET /jobs/{id} shows the job as any processing job.
    expect(await readJob(apiKey, jobId)).toMatchObject({ status: "processing", outputUrl: null });
  });

  it("refuses a split of an earlier claim, of a job that is not processing, and a plan whose parts do not cover the frames", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    expect(await internal(`/jobs/${job.id}/split`, { claim: 1, plan: planOf(2) })).toMatchObject({
      status: 409,
      body: { status: "queued" },
    });
    await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    const gap = planOf(3);
    gap.parts[1].firstFrame += 1;
    expectStatus(await internal(`/jobs/${job.id}/split`, { claim: 1, plan: gap }), 400);
    expect(await internal(`/jobs/${job.id}/split`, { claim: 2, plan: planOf(2) })).toMatchObject({
      status: 409,
      body: { status: "processing" },
    });
    expect((await row(job.id)).stage).toBe("whole");
  });

  it("a split that comes after the job was cancelled is refused, and the pieces it stored are deleted", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    const keys = [partInputKey(job.id, 0), partInputKey(job.id, 1), audioInputKey(job.id)];
    await Promise.all(keys.map(put));
    expectStatus(await api(apiKey).cancelJob(job.id), 200);
    expect(await internal(`/jobs/${job.id}/split`, { claim: 1, plan: planOf(2) })).toMatchObject({
      status: 409,
      body: { status: "cancelled" },
    });
    await scratchDeleted(job.id, keys);
  });

  it("a piece that lands after the first deletion of a held job's scratch goes with the sweep's, past the grace", async () => {
    const services = openServices(
      workerVars(stack.cloud, { publicUrl: stack.apiUrl, encoderUrl: stack.encoderUrl }, stack.internalSecret),
    );
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    const early = audioInputKey(job.id);
    await put(early);
    // Cancelled while an encoder held it, before any split: marked in the same statement.
    const cancelled = await jobStates.cancel(services.db, { id: job.id, accountId });
    if (!cancelled.moved) throw new Error(`the job was not cancelled: ${cancelled.found}`);
    const marked = (await row(job.id)).scratchPendingSince;
    expect(marked).toEqual(expect.any(Date));
    // The deletion made as the job ends takes what is there and leaves the mark.
    await deleteScratch(services, cancelled.job);
    expect(await stored(early)).toBe(false);
    expect((await row(job.id)).scratchPendingSince).toEqual(marked);
    // An upload its encoder gave up as the job ended lands: within the grace the sweep leaves it;
    // past it, the sweep deletes it and settles the mark.
    const late = partInputKey(job.id, 0);
    await put(late);
    expectStatus(await internal("/sweep", {}), 200);
    expect(await stored(late)).toBe(true);
    await admin.db
      .update(jobs)
      .set({ scratchPendingSince: new Date(Date.now() - 60_000) })
      .where(eq(jobs.id, job.id));
    expectStatus(await internal("/sweep", {}), 200);
    expect(await stored(late)).toBe(false);
    expect((await row(job.id)).scratchPendingSince).toBeNull();
  });
});

describe("split encoding › handed over while the pieces are stored", () => {
  /** A job claimed, with the audio's input alone stored and the plan handed over: 2 parts still being cut. */
  async function cuttingJob() {
    const account = await newAccount();
    const job = await createJob(account.apiKey, "mp4_264_720p");
    expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 }), 200);
    await put(audioInputKey(job.id));
    const split = await internal(`/jobs/${job.id}/split`, { claim: 1, plan: planOf(2, true), stored: [2] });
    expect(bodyOf(split, 200)).toEqual({ parts: 3 });
    return { ...account, jobId: job.id };
  }
  const splitCall = (jobId: string, claim: number, stored: number[]) =>
    internal(`/jobs/${jobId}/split`, { claim, plan: planOf(2, true), stored });

  it("only the stored inputs' tasks are published; each later call publishes what it names; the job runs its parts once none is cutting", async () => {
    const { jobId } = await cuttingJob();
    expect(await row(jobId)).toMatchObject({ status: "processing", stage: "cutting", dispatch: 0 });
    let parts = await partsOf(jobId);
    expect(parts.map((p) => [p.index, p.state, p.messageId !== null])).toEqual([
      [0, "cutting", false],
      [1, "cutting", false],
      [2, "queued", true],
    ]);
    expect(await part(jobId, 0, "claim", { dispatch: 0 })).toMatchObject({ status: 409, body: { status: "cutting" } });

    // The audio's task runs meanwhile; the job's progress is its tasks', whatever the splitting encoder beats.
    const audioLease = await claimPart(jobId, 2);
    expectStatus(await part(jobId, 2, "heartbeat", { claim: audioLease, progress: 0.6 }), 200);
    expectStatus(await internal(`/jobs/${jobId}/heartbeat`, { claim: 1, progress: 0.04 }), 200);
    // Two parts of 750 frames; the audio's task over all 1,500 at its weight.
    const audioWeight = 1500 * AUDIO_TASK_WEIGHT;
    expect((await row(jobId)).progress).toBeCloseTo((0.9 * 0.6 * audioWeight) / (1500 + audioWeight), 5);

    await put(partInputKey(jobId, 0));
    expect(bodyOf(await splitCall(jobId, 1, [2, 0]), 200)).toEqual({ parts: 3 });
    expect(bodyOf(await splitCall(jobId, 1, [2, 0]), 200), "sent again").toEqual({ parts: 3 });
    parts = await partsOf(jobId);
    expect(parts.map((p) => [p.state, p.messageId !== null])).toEqual([
      ["queued", true],
      ["cutting", false],
      ["processing", true],
    ]);
    expect((await row(jobId)).stage).toBe("cutting");

    await put(partInputKey(jobId, 1));
    expectStatus(await splitCall(jobId, 1, [2, 0, 1]), 200);
    expect(await row(jobId)).toMatchObject({ stage: "parts", dispatch: 1 });
    expect((await partsOf(jobId))[1]).toMatchObject({ state: "queued" });
    expect((await partsOf(jobId))[1].messageId).not.toBeNull();
    // Every input stored, the splitting encoder's claim is done with the job.
    expect(await internal(`/jobs/${jobId}/heartbeat`, { claim: 1, progress: 0.05 })).toMatchObject({ status: 409 });

    for (const index of [0, 1]) expectStatus(await completePart(jobId, index), 200);
    expectStatus(await completePart(jobId, 2, audioLease), 200);
    expect(await row(jobId)).toMatchObject({ status: "queued", stage: "join" });
  });

  it("a splitting encoder that dies: the sweep hands the job on as an interruption, its tasks stop, and the next attempt splits afresh", async () => {
    const { jobId } = await cuttingJob();
    const audioLease = await claimPart(jobId, 2);
    const quietSince = new Date(Date.now() - 5 * 60_000);
    await admin.db.update(jobs).set({ lastCheckedAt: quietSince }).where(eq(jobs.id, jobId));
    // The audio's beats are its own sign of life, not the job's: the job stays quiet.
    expectStatus(await part(jobId, 2, "heartbeat", { claim: audioLease, progress: 0.5 }), 200);
    expect((await row(jobId)).lastCheckedAt).toEqual(quietSince);

    expectStatus(await internal("/sweep", {}), 200);
    expect(await row(jobId)).toMatchObject({ status: "queued", stage: "cutting", interruptions: 1, dispatch: 1 });
    expect(await part(jobId, 2, "heartbeat", { claim: audioLease, progress: 0.7 })).toMatchObject({ status: 409 });

    const claimed = bodyOf(await internal(`/jobs/${jobId}/claim`, { dispatch: 1 }), 200);
    // The sweep's requeue took a lease to fence off the quiet encoder, and the claim another.
    expect(claimed.job).toMatchObject({ claim: 3 });
    expect(await row(jobId)).toMatchObject({ status: "processing", stage: "whole" });
    await Promise.all([partInputKey(jobId, 0), partInputKey(jobId, 1)].map(put));
    expect(bodyOf(await splitCall(jobId, 3, [2, 0, 1]), 200)).toEqual({ parts: 3 });
    expect((await partsOf(jobId)).map((p) => [p.state, p.attempts, p.interruptions, p.progress, p.dispatch])).toEqual([
      ["queued", 0, 0, 0, 1],
      ["queued", 0, 0, 0, 1],
      ["queued", 0, 0, 0, 1],
    ]);
    // The first attempt's audio encoder is fenced off: a new lease, a new dispatch.
    await put(partOutputKey(jobId, 2));
    expect(await part(jobId, 2, "complete", { claim: audioLease, outputKey: partOutputKey(jobId, 2) })).toMatchObject({
      status: 409,
    });
    expect(await part(jobId, 2, "claim", { dispatch: 0 })).toMatchObject({ status: 409 });
    for (const index of [0, 1, 2]) expectStatus(await completePart(jobId, index), 200);
    expect(await row(jobId)).toMatchObject({ status: "queued", stage: "join" });
  });

  it("the job's message delivered again takes over a quiet splitting encoder, as for any job, and not a beating one", async () => {
    const { jobId } = await cuttingJob();
    expect(await internal(`/jobs/${jobId}/claim`, { dispatch: 0 })).toMatchObject({ status: 409 });
    const quiet = new Date(Date.now() - jobStates.CLAIM_TAKEOVER_AFTER_MS - 1000);
    await admin.db.update(jobs).set({ lastCheckedAt: quiet }).where(eq(jobs.id, jobId));
    const claimed = bodyOf(await internal(`/jobs/${jobId}/claim`, { dispatch: 0 }), 200);
    expect(claimed.job).toMatchObject({ claim: 2 });
    expect(await row(jobId)).toMatchObject({ status: "processing", stage: "whole", interruptions: 1 });
    expect(await splitCall(jobId, 1, [2, 0])).toMatchObject({ status: 409, body: { status: "processing" } });
  });

  it("a task that fails the job while the pieces are stored: the next call is refused, and the scratch deleted", async () => {
    const { jobId } = await cuttingJob();
    const lease = await claimPart(jobId, 2);
    const failed = await part(jobId, 2, "fail", { claim: lease, errorMessage: "no audio decoder", retryable: false });
    expect(bodyOf(failed, 200)).toEqual({ status: "failed" });
    await put(partInputKey(jobId, 0));
    expect(await splitCall(jobId, 1, [2, 0])).toMatchObject({ status: 409, body: { status: "failed" } });
    expect((await row(jobId)).errorMessage).toBe("Audio: no audio decoder");
    await scratchDeleted(jobId, [audioInputKey(jobId), partInputKey(jobId, 0)]);
  });
});

describe("split encoding › the task the splitting encoder keeps", () => {
  it("is not published: it is answered with its dispatch and claimed by that encoder; every call keeps it; the others go out as usual", async () => {
    const account = await newAccount();
    const job = await createJob(account.apiKey, "mp4_264_720p");
    expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 }), 200);
    await put(audioInputKey(job.id));
    const call = (stored: number[]) =>
      internal(`/jobs/${job.id}/split`, { claim: 1, plan: planOf(2, true), stored, keep: [2] });
    expect(bodyOf(await call([2]), 200)).toEqual({ parts: 3, kept: [{ index: 2, dispatch: 0 }] });
    await put(partInputKey(job.id, 0));
    expect(bodyOf(await call([2, 0]), 200), "kept until claimed").toEqual({
      parts: 3,
      kept: [{ index: 2, dispatch: 0 }],
    });
    let parts = await partsOf(job.id);
    expect(parts.map((p) => [p.state, p.messageId !== null])).toEqual([
      ["queued", true],
      ["cutting", false],
      ["queued", false],
    ]);
    expect(await claimPart(job.id, 2)).toBe(1);
    await put(partInputKey(job.id, 1));
    expect(bodyOf(await call([2, 0, 1]), 200), "claimed, nothing to keep").toEqual({ parts: 3 });
    parts = await partsOf(job.id);
    expect(parts.map((p) => [p.state, p.messageId !== null])).toEqual([
      ["queued", true],
      ["queued", true],
      ["processing", false],
    ]);
    expect(await row(job.id)).toMatchObject({ stage: "parts" });
    // Left unclaimed (its encoder died first), it is a queued part without a message, which the
    // sweep publishes ("the sweep publishes a queued part whose message was never recorded").
  });
});

describe("split encoding › pieces no split recorded", () => {
  it("an encoder that died in the split stage: the pieces it stored are deleted when the job ends", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 }), 200);
    const keys = [partInputKey(job.id, 0), audioInputKey(job.id)];
    await Promise.all(keys.map(put));
    // Its encoder goes quiet before the split: the sweep hands the job on as an interruption.
    await admin.db
      .update(jobs)
      .set({ lastCheckedAt: new Date(Date.now() - 5 * 60_000) })
      .where(eq(jobs.id, job.id));
    expectStatus(await internal("/sweep", {}), 200);
    expect(await row(job.id)).toMatchObject({ status: "queued", interruptions: 1, split: null });
    const claimed = bodyOf(await internal(`/jobs/${job.id}/claim`, { dispatch: 1 }), 200);
    const outputKey = `outputs/${claimed.job?.accountId}/${job.id}/output.mp4`;
    await put(outputKey);
    expectStatus(
      await internal(`/jobs/${job.id}/complete`, { claim: claimed.job?.claim, outputKey, duration: 30 }),
      200,
    );
    await scratchDeleted(job.id, keys);
    expect(await stored(outputKey)).toBe(true);
  });
});

describe("split encoding › the audio's task", () => {
  it("follows the parts as one more, over every frame: its claim has no part, its failure names the audio, the join waits for it", async () => {
    const { jobId } = await splitJob(2, { audio: true });
    const plan = planOf(2, true);
    expect((await row(jobId)).split).toEqual(plan);
    expect((await partsOf(jobId)).map((p) => [p.index, p.firstFrame, p.frameCount, p.state])).toEqual([
      [0, 0, 750, "queued"],
      [1, 750, 750, "queued"],
      [2, 0, 1500, "queued"],
    ]);
    const { dispatch } = (await partsOf(jobId))[2];
    const claimed = bodyOf(await part(jobId, 2, "claim", { dispatch }), 200);
    expect(claimed).toMatchObject({ claim: 1, attempt: 0, plan, part: null });
    expect(
      bodyOf(
        await part(jobId, 2, "fail", { claim: 1, errorMessage: "FFmpeg failed: exit code 1", retryable: true }),
        200,
      ),
    ).toEqual({ status: "queued" });
    expect(await part(jobId, 3, "claim", { dispatch: 0 })).toMatchObject({ status: 404 });

    for (const index of [0, 1]) expectStatus(await completePart(jobId, index), 200);
    expect((await row(jobId)).stage, "the parts are done, the audio is not").toBe("parts");
    expectStatus(await completePart(jobId, 2), 200);
    expect(await row(jobId)).toMatchObject({ status: "queued", stage: "join" });
    const join = bodyOf(await internal(`/jobs/${jobId}/join/claim`, { dispatch: 2 }), 200);
    expect(join.parts).toEqual([0, 1, 2].map((index) => ({ index, outputKey: partOutputKey(jobId, index) })));
  });

  it("the job's progress weighs each task by its frames, the audio's at its own weight: parts of unequal length move it as much as they hold", async () => {
    const plan = planOf(2, true);
    plan.parts[0] = { ...plan.parts[0], frameCount: 500, to: 20 };
    plan.parts[1] = { ...plan.parts[1], firstFrame: 500, frameCount: 1000, from: 20 };
    const { apiKey, jobId } = await splitJob(2, { audio: true, plan });
    const total = 1500 + 1500 * AUDIO_TASK_WEIGHT;
    const longer = await claimPart(jobId, 1);
    expectStatus(await part(jobId, 1, "heartbeat", { claim: longer, progress: 0.5 }), 200);
    expect((await readJob(apiKey, jobId)).progress).toBeCloseTo((0.9 * 500) / total, 5);
    expectStatus(await completePart(jobId, 0), 200);
    const audio = await claimPart(jobId, 2);
    expectStatus(await part(jobId, 2, "heartbeat", { claim: audio, progress: 0.4 }), 200);
    expect((await readJob(apiKey, jobId)).progress).toBeCloseTo(
      (0.9 * (500 + 500 + 0.4 * 1500 * AUDIO_TASK_WEIGHT)) / total,
      5,
    );
  });

  it("spent, it fails the job as `Audio: <cause>`", async () => {
    const { jobId } = await splitJob(2, { audio: true });
    const lease = await claimPart(jobId, 2);
    const failed = await part(jobId, 2, "fail", {
      claim: lease,
      errorMessage: "FFmpeg failed: exit code 1",
      retryable: false,
    });
    expect(bodyOf(failed, 200)).toEqual({ status: "failed" });
    expect((await row(jobId)).errorMessage).toBe("Audio: FFmpeg failed: exit code 1");
  });
});

describe("split encoding › a part's state table", () => {
  it("a dispatch or claim beyond what the tables hold is refused as invalid (400), for the job's routes and its parts'", async () => {
    const { jobId } = await splitJob(2);
    for (const [path, body] of [
      [`/jobs/${jobId}/claim`, { dispatch: 2 ** 31 }],
      [`/jobs/${jobId}/heartbeat`, { claim: 2 ** 31 }],
      [`/jobs/${jobId}/parts/0/claim`, { dispatch: 2 ** 31 }],
      [`/jobs/${jobId}/parts/0/heartbeat`, { claim: 2 ** 31 }],
      [`/jobs/${jobId}/join/claim`, { dispatch: 1e12 }],
    ] as const) {
      expectStatus(await internal(path, body), 400, path);
    }
  });

  it("claim, a claim still beating refused, takeover after a quiet claim counting an interruption, the older lease refused", async () => {
    const { jobId, apiKey, accountId } = await splitJob(3);
    const claimed = bodyOf(await part(jobId, 0, "claim", { dispatch: 0 }), 200);
    expect(claimed).toEqual({
      claim: 1,
      attempt: 0,
      accountId,
      preset: "mp4_264_720p",
      inputUrl: SOURCE,
      plan: planOf(3),
      part: planOf(3).parts[0],
    });
    expect(await part(jobId, 0, "claim", { dispatch: 0 })).toMatchObject({
      status: 409,
      body: { status: "processing" },
    });
    expect(await part(jobId, 0, "claim", { dispatch: 1 })).toMatchObject({ status: 409 });
    expect(await part(jobId, 7, "claim", { dispatch: 0 })).toMatchObject({ status: 404 });

    expect(bodyOf(await part(jobId, 0, "heartbeat", { claim: 1, progress: 0.5 }), 200)).toEqual({
      status: "processing",
    });
    // The job's progress: the parts' mean over their 90 %.
    expect((await readJob(apiKey, jobId)).progress).toBeCloseTo((0.9 * 0.5) / 3, 5);

    await admin.db
      .update(jobParts)
      .set({ heartbeatAt: new Date(Date.now() - jobStates.CLAIM_TAKEOVER_AFTER_MS - 1000) })
      .where(eq(jobParts.jobId, jobId));
    const again = bodyOf(await part(jobId, 0, "claim", { dispatch: 0 }), 200);
    expect(again).toMatchObject({ claim: 2, attempt: 0 });
    expect((await partsOf(jobId))[0]).toMatchObject({ state: "processing", interruptions: 1, lease: 2, progress: 0 });
    expect(await part(jobId, 0, "heartbeat", { claim: 1, progress: 0.7 })).toMatchObject({
      status: 409,
      body: { status: "processing" },
    });
    expect(await part(jobId, 0, "complete", { claim: 1, outputKey: partOutputKey(jobId, 0) })).toMatchObject({
      status: 409,
    });
  });

  it("a quiet part whose interruptions are spent fails the job at its next claim, with the part named", async () => {
    const { jobId } = await splitJob(2);
    await claimPart(jobId, 1);
    await admin.db
      .update(jobParts)
      .set({
        heartbeatAt: new Date(Date.now() - jobStates.CLAIM_TAKEOVER_AFTER_MS - 1000),
        interruptions: MAX_INTERRUPTIONS,
      })
      .where(eq(jobParts.jobId, jobId));
    expect(await part(jobId, 1, "claim", { dispatch: 0 })).toMatchObject({ status: 409, body: { status: "failed" } });
    expect(await row(jobId)).toMatchObject({
      status: "failed",
      errorMessage: `Part 2 of 2: ${PART_INTERRUPTED_MESSAGE}`,
    });
  });

  it("complete: only the part's own output key; the last completion hands the job to its join, once, even when the last two race", async () => {
    const { jobId, apiKey, keys } = await splitJob(3);
    const lease = await claimPart(jobId, 0);
    expectStatus(await part(jobId, 0, "complete", { claim: lease, outputKey: partOutputKey(jobId, 1) }), 400);
    expect(bodyOf(await completePart(jobId, 0, lease), 200)).toEqual({ status: "completed" });
    // The same report again: the same answer.
    expect(bodyOf(await part(jobId, 0, "complete", { claim: lease, outputKey: partOutputKey(jobId, 0) }), 200)).toEqual(
      { status: "completed" },
    );
    expect((await row(jobId)).stage).toBe("parts");

    const [one, two] = [await claimPart(jobId, 1), await claimPart(jobId, 2)];
    const answers = await Promise.all([completePart(jobId, 1, one), completePart(jobId, 2, two)]);
    for (const answer of answers) expect(bodyOf(answer, 200)).toEqual({ status: "completed" });
    const joined = await row(jobId);
    // One dispatch more, not two: exactly one report moved the job.
    expect(joined).toMatchObject({ status: "queued", stage: "join", dispatch: 2, messageId: expect.any(String) });
    expect(JSON.parse((await messageOf(joined.messageId as string)).body)).toEqual({
      jobId,
      dispatch: 2,
      join: true,
    });
    expect((await readJob(apiKey, jobId)).progress).toBeCloseTo(0.9, 5);

    // The join claims the job's own lease and is told where the parts are.
    const join = bodyOf(await internal(`/jobs/${jobId}/join/claim`, { dispatch: 2 }), 200);
    expect(join).toMatchObject({
      job: { id: jobId, claim: 2, preset: "mp4_264_720p" },
      plan: planOf(3),
      parts: [0, 1, 2].map((index) => ({ index, outputKey: partOutputKey(jobId, index) })),
    });
    expect(await internal(`/jobs/${jobId}/claim`, { dispatch: 2 })).toMatchObject({ status: 409 });
    expectStatus(await internal(`/jobs/${jobId}/heartbeat`, { claim: 2, progress: 0.5 }), 200);
    expect((await readJob(apiKey, jobId)).progress).toBeCloseTo(0.95, 5);

    const outputKey = `outputs/${joined.accountId}/${jobId}/output.mp4`;
    await put(outputKey);
    expect(bodyOf(await internal(`/jobs/${jobId}/complete`, { claim: 2, outputKey, duration: 90 }), 200)).toEqual({
      status: "completed",
    });
    await scratchDeleted(jobId, [...keys, ...[0, 1, 2].map((i) => partOutputKey(jobId, i))]);
    expect(await stored(outputKey)).toBe(true);
  });

  it("every part of several jobs completing at once: each job is handed to its join exactly once", async () => {
    const split = await Promise.all(Array.from({ length: 4 }, () => splitJob(3)));
    const leases = await Promise.all(
      split.map(({ jobId }) => Promise.all([0, 1, 2].map((index) => claimPart(jobId, index)))),
    );
    const answers = await Promise.all(
      split.flatMap(({ jobId }, j) => [0, 1, 2].map((index) => completePart(jobId, index, leases[j][index]))),
    );
    for (const answer of answers) expect(bodyOf(answer, 200)).toEqual({ status: "completed" });
    for (const { jobId } of split) {
      expect(await row(jobId)).toMatchObject({ status: "queued", stage: "join", dispatch: 2 });
    }
  });

  it("a failed join with attempts left is dispatched again as a join, not as the whole job", async () => {
    const { jobId } = await splitJob(1);
    expectStatus(await completePart(jobId, 0), 200);
    const claim = bodyOf(await internal(`/jobs/${jobId}/join/claim`, { dispatch: 2 }), 200).job?.claim;
    const failed = await internal(`/jobs/${jobId}/fail`, {
      claim,
      errorMessage: "Download failed: storage answered 503",
      retryable: true,
    });
    expect(bodyOf(failed, 200)).toEqual({ status: "queued" });
    const job = await row(jobId);
    expect(job).toMatchObject({ status: "queued", stage: "join", dispatch: 3, retryCount: 1 });
    expect(JSON.parse((await messageOf(job.messageId as string)).body)).toEqual({ jobId, dispatch: 3, join: true });
  });

  it("fail: the part is tried again in a new dispatch, held back; its third failure fails the job, named, with one webhook and one unit", async () => {
    const { jobId, accountId, keys } = await splitJob(3, { webhook: true });
    const others = [await heldMessage(jobId, 0), await heldMessage(jobId, 2)];
    const report = { errorMessage: "FFmpeg failed: exit code 1", retryable: true };
    for (let attempt = 0; attempt < PART_ATTEMPTS - 1; attempt++) {
      const claimed = bodyOf(await part(jobId, 1, "claim", { dispatch: attempt }), 200);
      expect(claimed).toMatchObject({ attempt });
      expect(bodyOf(await part(jobId, 1, "fail", { claim: claimed.claim, ...report }), 200)).toEqual({
        status: "queued",
      });
      const requeued = (await partsOf(jobId))[1];
      expect(requeued).toMatchObject({ state: "queued", attempts: attempt + 1, dispatch: attempt + 1 });
      const message = await messageOf(requeued.messageId as string);
      expect(JSON.parse(message.body)).toEqual({ jobId, dispatch: attempt + 1, part: 1 });
      expect(message.notBefore).toBeGreaterThan(message.createdAt);
      // The earlier dispatch's message claims nothing.
      expect(await part(jobId, 1, "claim", { dispatch: attempt })).toMatchObject({ status: 409 });
    }
    const last = bodyOf(await part(jobId, 1, "claim", { dispatch: PART_ATTEMPTS - 1 }), 200);
    const final = await signedInternal(`/jobs/${jobId}/parts/1/fail`, { claim: last.claim, ...report });
    expect(bodyOf(await final(), 200)).toEqual({ status: "failed" });
    expect(
      bodyOf(await part(jobId, 1, "fail", { claim: last.claim, ...report }), 200),
      "the same report, signed afresh",
    ).toEqual({ status: "failed" });
    expect(await row(jobId)).toMatchObject({
      status: "failed",
      errorMessage: "Part 2 of 3: FFmpeg failed: exit code 1",
    });

    const hook = await hooks.waitFor(jobId);
    expect(JSON.parse(hook.body)).toMatchObject({
      event: "job.failed",
      errorMessage: "Part 2 of 3: FFmpeg failed: exit code 1",
    });
    const [units] = await admin.db.select({ count: usage.count }).from(usage).where(eq(usage.accountId, accountId));
    expect(units.count).toBe(1);
    // The other parts' messages still queued are deleted, and the scratch with them.
    await vi.waitFor(
      async () => {
        for (const id of others) expect((await messageOf(id)).state).toBe("cancelled");
      },
      { timeout: 10_000, interval: 100 },
    );
    await scratchDeleted(jobId, keys);
    expect(hooks.received.filter((h) => JSON.parse(h.body).jobId === jobId)).toHaveLength(1);
  });

  it("a failure no attempt can fix fails the job at once", async () => {
    const { jobId } = await splitJob(2);
    const lease = await claimPart(jobId, 0);
    const failed = await part(jobId, 0, "fail", {
      claim: lease,
      errorMessage: "A part's input is no longer in storage; the job cannot be finished.",
      retryable: false,
    });
    expect(bodyOf(failed, 200)).toEqual({ status: "failed" });
    expect((await row(jobId)).errorMessage).toBe(
      "Part 1 of 2: A part's input is no longer in storage; the job cannot be finished.",
    );
  });
});

describe("split encoding › cancel", () => {
  it("during the parts: queued part messages deleted, a running part told at its next beat, its report refused, scratch deleted", async () => {
    const { jobId, apiKey, keys } = await splitJob(3);
    const lease = await claimPart(jobId, 0);
    const held = await heldMessage(jobId, 2);
    const res = await api(apiKey).cancelJob(jobId);
    expectStatus(res, 200);
    expect(res.body.message).toMatch(/processing/i);
    expect(await part(jobId, 0, "heartbeat", { claim: lease, progress: 0.5 })).toMatchObject({
      status: 409,
      body: { status: "cancelled" },
    });
    await vi.waitFor(async () => expect((await messageOf(held)).state).toBe("cancelled"), {
      timeout: 10_000,
      interval: 100,
    });
    await scratchDeleted(jobId, keys);
    // The running part's output, uploaded after the scratch went, is deleted when it reports.
    expect(await completePart(jobId, 0, lease)).toMatchObject({ status: 409, body: { status: "cancelled" } });
    await scratchDeleted(jobId, [partOutputKey(jobId, 0)]);
    expect(await readJob(apiKey, jobId)).toMatchObject({ status: "cancelled" });
  });

  it("during the join: the join's message deleted, the join told at its next beat", async () => {
    const { jobId, apiKey, keys } = await splitJob(1);
    expectStatus(await completePart(jobId, 0), 200);
    const claim = bodyOf(await internal(`/jobs/${jobId}/join/claim`, { dispatch: 2 }), 200).job?.claim;
    const { messageId } = await qstash.publishJSON({
      url: `${stack.encoderUrl}/deliveries/jobs`,
      body: { jobId, dispatch: 2, join: true },
      delay: 600,
    });
    await admin.db.update(jobs).set({ messageId }).where(eq(jobs.id, jobId));
    expectStatus(await api(apiKey).cancelJob(jobId), 200);
    expect((await messageOf(messageId)).state).toBe("cancelled");
    expect(await internal(`/jobs/${jobId}/heartbeat`, { claim, progress: 0.5 })).toMatchObject({
      status: 409,
      body: { status: "cancelled" },
    });
    await scratchDeleted(jobId, [...keys, partOutputKey(jobId, 0)]);
  });
});

describe("split encoding › interruptions", () => {
  it("the sweep publishes a queued part whose message was never recorded, and deletes a scratch left pending", async () => {
    const { jobId, apiKey, keys } = await splitJob(2);
    const long = new Date(Date.now() - 5 * 60_000);
    await admin.db
      .update(jobParts)
      .set({ messageId: null, heartbeatAt: long })
      .where(and(eq(jobParts.jobId, jobId), eq(jobParts.index, 1)));
    expectStatus(await internal("/sweep", {}), 200);
    const [, republished] = await partsOf(jobId);
    expect(republished).toMatchObject({ state: "queued", dispatch: 0, messageId: expect.any(String) });
    expect(JSON.parse((await messageOf(republished.messageId as string)).body)).toEqual({
      jobId,
      dispatch: 0,
      part: 1,
    });

    // The job ends, and its scratch's deletion never ran (the Worker stopped after the cancel's statement).
    expectStatus(await api(apiKey).cancelJob(jobId), 200);
    await scratchDeleted(jobId, keys);
    await Promise.all(keys.map(put));
    await admin.db.update(jobs).set({ scratchPendingSince: long }).where(eq(jobs.id, jobId));
    expectStatus(await internal("/sweep", {}), 200);
    await scratchDeleted(jobId, keys);
  });

  it("the sweep dispatches a stale part again as an interruption, fencing off its encoder; spent, the job fails", async () => {
    const { jobId } = await splitJob(2);
    const lease = await claimPart(jobId, 0);
    const quiet = new Date(Date.now() - 5 * 60_000);
    await admin.db.update(jobParts).set({ heartbeatAt: quiet }).where(eq(jobParts.jobId, jobId));
    // The job itself is not stale while its parts run.
    await admin.db.update(jobs).set({ lastCheckedAt: quiet }).where(eq(jobs.id, jobId));
    expectStatus(await internal("/sweep", {}), 200);
    const [requeued] = await partsOf(jobId);
    expect(requeued).toMatchObject({ state: "queued", interruptions: 1, dispatch: 1, lease: lease + 1 });
    expect(JSON.parse((await messageOf(requeued.messageId as string)).body)).toEqual({ jobId, dispatch: 1, part: 0 });
    expect(await row(jobId)).toMatchObject({ status: "processing", stage: "parts", interruptions: 0 });
    expect(await part(jobId, 0, "heartbeat", { claim: lease })).toMatchObject({ status: 409 });

    await claimPart(jobId, 0);
    await admin.db
      .update(jobParts)
      .set({ heartbeatAt: quiet, interruptions: MAX_INTERRUPTIONS })
      .where(eq(jobParts.jobId, jobId));
    expectStatus(await internal("/sweep", {}), 200);
    expect(await row(jobId)).toMatchObject({
      status: "failed",
      errorMessage: `Part 1 of 2: ${PART_INTERRUPTED_MESSAGE}`,
    });
  });

  it("the sweep settles a part long queued on a message QStash no longer holds as a lost message", async () => {
    const { jobId } = await splitJob(2);
    await admin.db
      .update(jobParts)
      .set({ messageId: "msg_dropped_without_callback", heartbeatAt: new Date(Date.now() - 15 * 60_000) })
      .where(and(eq(jobParts.jobId, jobId), eq(jobParts.index, 0)));
    expectStatus(await internal("/sweep", {}), 200);
    const [requeued] = await partsOf(jobId);
    expect(requeued).toMatchObject({ state: "queued", interruptions: 1, dispatch: 1 });
    expect(JSON.parse((await messageOf(requeued.messageId as string)).body)).toEqual({ jobId, dispatch: 1, part: 0 });
  });

  it("a part's message QStash gave up on: the part is dispatched again as an interruption; the report sent again moves nothing", async () => {
    const { jobId } = await splitJob(2);
    const lost = (await partsOf(jobId))[1].messageId as string;
    const report = async () => {
      const sourceBody = Buffer.from(JSON.stringify({ jobId, dispatch: 0, part: 1 })).toString("base64");
      const { messageId } = await qstash.publishJSON({
        url: `${stack.apiUrl}/internal/dispatch-failures`,
        body: { status: 503, retried: 3, maxRetries: 3, sourceMessageId: lost, sourceBody },
        retries: 0,
      });
      await vi.waitFor(async () => expect((await messageOf(messageId)).state).toBe("delivered"), {
        timeout: 10_000,
        interval: 50,
      });
    };
    await report();
    const after = (await partsOf(jobId))[1];
    expect(after).toMatchObject({ state: "queued", interruptions: 1, dispatch: 1 });
    expect(after.messageId).not.toBe(lost);
    expect(JSON.parse((await messageOf(after.messageId as string)).body)).toEqual({ jobId, dispatch: 1, part: 1 });
    await report();
    expect((await partsOf(jobId))[1]).toMatchObject({ interruptions: 1, dispatch: 1, messageId: after.messageId });
  });
});
