import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { accounts, jobs } from "../../drizzle/schema";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { MAX_INTERRUPTIONS } from "../../domain/jobs";
import { DISPATCH_RETRIES } from "../../worker/services/queue";
import { admin, api, completeJob, createJob, deliveriesOf, internal, messageOf, newAccount } from "./harness";

/**
 * The encoder sends a report again when it did not hear the answer to the first; the sweep
 * publishes what a failed step left undone (a webhook, a dispatch), under QStash
 * deduplication ids, so nothing is sent twice.
 */
const hooks = await startWebhookReceiver();
afterAll(() => hooks.stop());

const longAgo = () => new Date(Date.now() - 5 * 60_000);
const row = async (jobId: string) => (await admin.db.select().from(jobs).where(eq(jobs.id, jobId)))[0];

/** The webhook stays unsent: the account has none while the job finishes (its lookup is not cached: the internal routes read the account). */
const withoutWebhook = (accountId: string) =>
  admin.db.update(accounts).set({ webhookUrl: null }).where(eq(accounts.id, accountId));

/**
 * A job that failed for good as if the Worker had stopped right after the commit: its webhook
 * unsent (the account had none at that moment; it has one again now), the outbox entry for the
 * test to place in time.
 */
async function failedWithItsWebhookUnsent() {
  const { apiKey, accountId } = await newAccount();
  await admin.setWebhook(accountId, hooks.url);
  const job = await createJob(apiKey);
  await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
  await withoutWebhook(accountId);
  await internal(`/jobs/${job.id}/fail`, {
    claim: 1,
    errorMessage: "FFmpeg could not process the source",
    retryable: false,
  });
  await expect.poll(async () => (await row(job.id)).webhookPendingSince, { timeout: 10_000 }).toBeNull();
  await admin.setWebhook(accountId, hooks.url);
  return job;
}

/** The sweep as the cron runs it (other files' sweeps may get to a job first: the tests look at what it did to the job). */
const sweep = async () => expect((await internal("/sweep", {})).status).toBe(200);

describe("a report sent again finds the job where the first one put it", () => {
  it("complete: the same output answers 200 and changes nothing; another output is a 409", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    const key = await completeJob(job.id, accountId);
    // Once the step after the response has taken it out of the webhook outbox (no webhook: nothing to send).
    await expect.poll(async () => (await row(job.id)).webhookPendingSince, { timeout: 10_000 }).toBeNull();
    const before = await row(job.id);
    const again = await internal(`/jobs/${job.id}/complete`, { claim: 1, outputKey: key, duration: 12.5 });
    expect(again).toMatchObject({ status: 200, body: { status: "completed" } });
    expect(await row(job.id)).toEqual(before);
    const other = await internal(`/jobs/${job.id}/complete`, { claim: 1, outputKey: `${key}.other`, duration: 12.5 });
    expect(other).toMatchObject({ status: 409, body: { error: "Conflict", status: "completed" } });
  });

  it("a final fail: the same message answers 200; a job the sweep failed is a 409 to the encoder's late report", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    const report = { errorMessage: "Download failed: the source answered HTTP 503", claim: 1, retryable: false };
    expect((await internal(`/jobs/${job.id}/fail`, report)).body).toEqual({ status: "failed" });
    expect(await internal(`/jobs/${job.id}/fail`, report)).toMatchObject({ status: 200, body: { status: "failed" } });

    const swept = await createJob(apiKey);
    await internal(`/jobs/${swept.id}/claim`, { dispatch: 0 });
    await admin.db
      .update(jobs)
      .set({ lastCheckedAt: longAgo(), interruptions: MAX_INTERRUPTIONS })
      .where(eq(jobs.id, swept.id));
    await sweep();
    expect(await internal(`/jobs/${swept.id}/fail`, { ...report })).toMatchObject({
      status: 409,
      body: { status: "failed" },
    });
  });

  it("a retry: the same report answers 200 queued; after the sweep requeued the job it is a 409", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    const report = { errorMessage: "Download failed: the source answered HTTP 503", claim: 1, retryable: true };
    expect((await internal(`/jobs/${job.id}/fail`, report)).body).toEqual({ status: "queued" });
    expect(await internal(`/jobs/${job.id}/fail`, report)).toMatchObject({ status: 200, body: { status: "queued" } });

    const requeued = await createJob(apiKey);
    await internal(`/jobs/${requeued.id}/claim`, { dispatch: 0 });
    await admin.db.update(jobs).set({ lastCheckedAt: longAgo() }).where(eq(jobs.id, requeued.id));
    await sweep();
    expect(await row(requeued.id)).toMatchObject({ retryCount: 0, interruptions: 1, dispatch: 1, lease: 2 });
    expect(await internal(`/jobs/${requeued.id}/fail`, { ...report })).toMatchObject({
      status: 409,
      body: { status: "queued" },
    });
  });
});

describe("the webhook outbox", () => {
  it("finishing a job puts its webhook in the outbox, and publishing it takes it out, with or without a webhook", async () => {
    const withHook = await newAccount();
    await admin.setWebhook(withHook.accountId, hooks.url);
    const without = await newAccount();
    const [a, b] = [await createJob(withHook.apiKey), await createJob(without.apiKey)];
    await completeJob(a.id, withHook.accountId);
    await completeJob(b.id, without.accountId);
    await hooks.waitFor(a.id);
    await expect
      .poll(async () => [(await row(a.id)).webhookPendingSince, (await row(b.id)).webhookPendingSince], {
        timeout: 10_000,
      })
      .toEqual([null, null]);
  });

  it("a webhook left in the outbox is published by the sweep, once, however often the sweep publishes it", async () => {
    const job = await failedWithItsWebhookUnsent();
    await admin.db.update(jobs).set({ webhookPendingSince: longAgo() }).where(eq(jobs.id, job.id));

    await sweep();
    const [hook] = await hooks.waitForAttempts(job.id, 1);
    expect(JSON.parse(hook.body)).toMatchObject({ event: "job.failed", jobId: job.id, status: "failed" });
    expect((await row(job.id)).webhookPendingSince).toBeNull();

    // Its publication succeeded but went unrecorded: the sweep publishes it again, QStash enqueues nothing.
    await admin.db.update(jobs).set({ webhookPendingSince: longAgo() }).where(eq(jobs.id, job.id));
    await sweep();
    expect((await row(job.id)).webhookPendingSince).toBeNull();
    await new Promise((r) => setTimeout(r, 1500));
    expect(hooks.received.filter((h) => JSON.parse(h.body).jobId === job.id)).toHaveLength(1);
  });

  it("the sweep leaves a webhook in the outbox for its first 10 s, the finishing step's own time to publish it, and takes it after", async () => {
    const job = await failedWithItsWebhookUnsent();

    // 6 s old: 4 s to spare for the sweep's request to reach the Worker on a loaded host.
    const young = new Date(Date.now() - 6_000);
    await admin.db.update(jobs).set({ webhookPendingSince: young }).where(eq(jobs.id, job.id));
    await sweep();
    expect((await row(job.id)).webhookPendingSince).toEqual(young);
    expect(hooks.received.filter((h) => JSON.parse(h.body).jobId === job.id)).toEqual([]);

    await admin.db
      .update(jobs)
      .set({ webhookPendingSince: new Date(Date.now() - 12_000) })
      .where(eq(jobs.id, job.id));
    await sweep();
    expect((await row(job.id)).webhookPendingSince).toBeNull();
    expect(JSON.parse((await hooks.waitFor(job.id)).body)).toMatchObject({ event: "job.failed", jobId: job.id });
  });

  it("a repeated complete publishes a webhook still in the outbox at once", async () => {
    const { apiKey, accountId } = await newAccount();
    await admin.setWebhook(accountId, hooks.url);
    const job = await createJob(apiKey);
    const key = await completeJob(job.id, accountId);
    await hooks.waitFor(job.id);
    const repeated = await createJob(apiKey);
    await internal(`/jobs/${repeated.id}/claim`, { dispatch: 0 });
    await withoutWebhook(accountId);
    const repeatedKey = key.replace(job.id, repeated.id);
    await internal(`/jobs/${repeated.id}/complete`, { claim: 1, outputKey: repeatedKey, duration: 1 });
    await expect.poll(async () => (await row(repeated.id)).webhookPendingSince, { timeout: 10_000 }).toBeNull();
    await admin.setWebhook(accountId, hooks.url);
    await admin.db.update(jobs).set({ webhookPendingSince: new Date() }).where(eq(jobs.id, repeated.id));
    expect(
      (await internal(`/jobs/${repeated.id}/complete`, { claim: 1, outputKey: repeatedKey, duration: 1 })).status,
    ).toBe(200);
    expect(JSON.parse((await hooks.waitFor(repeated.id)).body)).toMatchObject({
      event: "job.completed",
      jobId: repeated.id,
    });
  });
});

describe("a lost dispatch", () => {
  it("a queued job whose message was never recorded is dispatched by the sweep; one already in QStash is not enqueued twice", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    await expect.poll(() => deliveriesOf(job.id), { timeout: 10_000 }).toHaveLength(1);
    const { messageId } = await row(job.id);
    // The Worker failed between the publish and its record.
    await admin.db.update(jobs).set({ messageId: null, createdAt: longAgo() }).where(eq(jobs.id, job.id));
    await sweep();
    expect((await row(job.id)).messageId).toBe(messageId);
    // Dispatches go first in, first out: once a job created after the sweep is delivered, a
    // second message of this one, had QStash enqueued it, would have been delivered before.
    const barrier = await createJob(apiKey);
    await expect.poll(() => deliveriesOf(barrier.id), { timeout: 10_000 }).toHaveLength(1);
    expect(await deliveriesOf(job.id)).toHaveLength(1);

    // The sweep requeued a stale job, and its publish failed: the next sweep dispatches it.
    await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    await admin.db
      .update(jobs)
      .set({ status: "queued", interruptions: 1, dispatch: 1, messageId: null, lastCheckedAt: longAgo() })
      .where(eq(jobs.id, job.id));
    await sweep();
    const redispatched = await row(job.id);
    expect(redispatched.messageId).not.toBe(messageId);
    const message = await messageOf(redispatched.messageId!);
    expect(message).toMatchObject({ maxRetries: DISPATCH_RETRIES });
    expect(JSON.parse(message.body)).toEqual({ jobId: job.id, dispatch: 1 });
    await expect.poll(() => deliveriesOf(job.id), { timeout: 10_000 }).toHaveLength(2);
    expect((await api(apiKey).getJob(job.id)).body).toMatchObject({ status: "queued", retryCount: 0 });
  });
});
