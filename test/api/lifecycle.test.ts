import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it, vi } from "vitest";
import { jobs } from "../../drizzle/schema";
import { JOB_DELIVERY_RETRIES, MAX_INTERRUPTIONS, outputKeyFor } from "../../domain/jobs";
import { CLAIM_TAKEOVER_AFTER_MS } from "../../worker/lib/job-states";
import { qstashSignature } from "../support/qstash-signature";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { bodyOf, expectStatus } from "../support/api-client";
import {
  admin,
  api,
  completeJob,
  createJob,
  internal,
  ISO_MS,
  messageOf,
  newAccount,
  qstash,
  readJob,
  signedInternal,
  stack,
} from "./harness";

/** QStash (the emulator) delivers webhooks to this receiver. */
const hooks = await startWebhookReceiver();
afterAll(() => hooks.stop());

describe("contract §4 States and transitions › driven through the internal API", () => {
  it("queued → processing sets startedAt and lastCheckedAt; heartbeats record progress, and the duration once the encoder sends it", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const claim = await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    expectStatus(claim, 200);
    expect(claim.body.job).toMatchObject({
      id: job.id,
      preset: "mp4_264_720p",
      plan: "free",
      maxSourceSeconds: 600,
      attempt: 0,
    });
    const read = await api(apiKey).getJob(job.id);
    expectStatus(read, 200);
    expect(read.body.status).toBe("processing");
    expect(read.body.metadata.startedAt).toMatch(ISO_MS);
    expect(read.body.metadata.lastCheckedAt).toMatch(ISO_MS);
    expect(read.body.outputUrl).toBeNull();
    expect(read.body.links.cancel).toBe(`/api/v1/jobs/${job.id}`);
    const hb = await internal(`/jobs/${job.id}/heartbeat`, { claim: 1, progress: 0.4 });
    expect(hb.body).toEqual({ status: "processing" });
    expect((await readJob(apiKey, job.id)).progress).toBeCloseTo(0.4);
    expect((await api(apiKey).getJob(job.id)).body).toMatchObject({ status: "processing", duration: null });
    // docs/contract.md §3.1: duration is "measured while the job is processed": the encoder sends
    // it once it has probed the source.
    expectStatus(await internal(`/jobs/${job.id}/heartbeat`, { claim: 1, progress: 0.5, duration: 12.5 }), 200);
    expect((await api(apiKey).getJob(job.id)).body).toMatchObject({ status: "processing", duration: 12.5 });
    // Below what a 4-byte real holds: stored as 0, not refused by Postgres as an underflow (a 500).
    const tiny = await internal(`/jobs/${job.id}/heartbeat`, { claim: 1, progress: 2.8e-113 });
    expect(tiny.body).toEqual({ status: "processing" });
    expect((await readJob(apiKey, job.id)).progress).toBe(0);
  });

  it("contract §9.1 Limits: the claim tells the encoder the plan's longest source: 10 minutes free, 60 pro, 180 business, 480 enterprise", async () => {
    const minutes = { free: 10, pro: 60, business: 180, enterprise: 480 } as const;
    for (const [plan, limit] of Object.entries(minutes)) {
      const { apiKey } = await newAccount(plan as keyof typeof minutes);
      const job = await createJob(apiKey);
      const claim = await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
      expect(claim.body.job, plan).toMatchObject({ plan, maxSourceSeconds: limit * 60 });
    }
  });

  it("processing → completed sends a Standard Webhooks–signed job.completed whose outputUrl downloads directly", async () => {
    const { apiKey, accountId } = await newAccount();
    const { secret } = await admin.setWebhook(accountId, hooks.url);
    const job = await createJob(apiKey);
    await completeJob(job.id, accountId, "webhook-output");
    const hook = await hooks.waitFor(job.id);
    const payload = new Webhook(secret).verify(hook.body, hook.headers) as Record<string, unknown>;
    expect(payload).toMatchObject({
      event: "job.completed",
      jobId: job.id,
      status: "completed",
      errorMessage: null,
      duration: 12.5,
    });
    expect(payload.expiresAt).toMatch(ISO_MS);
    const download = await fetch(payload.outputUrl as string);
    expect(await download.text()).toBe("webhook-output");
    expect(() => new Webhook(secret).verify(hook.body.replace("completed", "failed"), hook.headers)).toThrow();
  });

  it("a failure at the source is retried as a new dispatch, held back; once attempts are spent the job fails with retryCount and job.failed", async () => {
    const { apiKey, accountId } = await newAccount();
    const { secret } = await admin.setWebhook(accountId, hooks.url);
    const job = await createJob(apiKey);
    const report = { errorMessage: "Download failed: connection refused", retryable: true };
    expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 }), 200);
    const retry = await internal(`/jobs/${job.id}/fail`, { claim: 1, ...report });
    expect(retry.body.status).toBe("queued");
    expect(await readJob(apiKey, job.id)).toMatchObject({ status: "queued", errorMessage: null, retryCount: 1 });
    const [row] = await admin.db.select().from(jobs).where(eq(jobs.id, job.id));
    expect(row).toMatchObject({ dispatch: 1, retryCount: 1, interruptions: 0, messageId: expect.any(String) });
    // The retry's message is held back from the source that failed (JOB_RETRY_DELAY_SECONDS).
    const message = await messageOf(row.messageId as string);
    expect(message.notBefore).toBeGreaterThan(message.createdAt);
    expect(JSON.parse(message.body)).toEqual({ jobId: job.id, dispatch: 1 });
    // The first dispatch's message, delivered again, claims nothing: it is spent.
    expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 }), 409);

    expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 1 }), 200);
    expect((await internal(`/jobs/${job.id}/fail`, { claim: 2, ...report })).body.status).toBe("queued");
    expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 2 }), 200);
    const fail = await internal(`/jobs/${job.id}/fail`, { claim: 3, ...report });
    expect(fail.body.status).toBe("failed");
    const read = await api(apiKey).getJob(job.id);
    expectStatus(read, 200);
    expect(read.body).toMatchObject({
      status: "failed",
      retryCount: JOB_DELIVERY_RETRIES,
      errorMessage: "Download failed: connection refused",
      outputUrl: null,
    });
    const hook = await hooks.waitFor(job.id);
    const payload = new Webhook(secret).verify(hook.body, hook.headers) as Record<string, unknown>;
    expect(payload).toMatchObject({
      event: "job.failed",
      jobId: job.id,
      outputUrl: null,
      errorMessage: "Download failed: connection refused",
    });
  });

  it("a failure no attempt can fix fails the job at once, its attempts unspent", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    const fail = await internal(`/jobs/${job.id}/fail`, {
      claim: 1,
      errorMessage: "DURATION_EXCEEDED: the source is 11 minutes long; the free plan allows 10",
      retryable: false,
    });
    expect(fail.body.status).toBe("failed");
    expect(await readJob(apiKey, job.id)).toMatchObject({ status: "failed", retryCount: 0 });
  });

  it("a stale processing job is dispatched again by the sweep as an interruption, and failed once its interruptions are spent", async () => {
    const { apiKey } = await newAccount();
    const quiet = () => new Date(Date.now() - 5 * 60_000);
    const job = await createJob(apiKey);
    await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    await admin.db
      .update(jobs)
      .set({ lastCheckedAt: quiet(), interruptions: MAX_INTERRUPTIONS })
      .where(eq(jobs.id, job.id));
    // Another file's sweep, running beside this one, may get to the job first: the job's state says what was done.
    expect((await internal("/sweep", {})).status).toBe(200);
    const read = await api(apiKey).getJob(job.id);
    expectStatus(read, 200);
    expect(read.body).toMatchObject({
      status: "failed",
      retryCount: 0,
      errorMessage: expect.stringMatching(/interrupted 4 times/),
    });

    const second = await createJob(apiKey);
    await internal(`/jobs/${second.id}/claim`, { dispatch: 0 });
    await admin.db.update(jobs).set({ lastCheckedAt: quiet() }).where(eq(jobs.id, second.id));
    await internal("/sweep", {});
    // The encoder's crash is not the source's: retryCount stays 0.
    expect(await readJob(apiKey, second.id)).toMatchObject({ status: "queued", retryCount: 0 });
    const [row] = await admin.db.select().from(jobs).where(eq(jobs.id, second.id));
    expect(row).toMatchObject({ interruptions: 1, dispatch: 1 });
  });

  it("a redelivery claims a job whose encoder went quiet, counting an interruption; its spent interruptions fail the job instead", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const first = await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    expect(first.body.job).toMatchObject({ attempt: 0, claim: 1 });
    // Still beating: the job stays with its encoder, and the delivery is told so (409, processing).
    expect(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 })).toMatchObject({
      status: 409,
      body: { status: "processing" },
    });
    await admin.db
      .update(jobs)
      .set({ lastCheckedAt: new Date(Date.now() - CLAIM_TAKEOVER_AFTER_MS - 1000) })
      .where(eq(jobs.id, job.id));
    const again = await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    expect(again.body.job).toMatchObject({ attempt: 0, claim: 2 });
    // The encoder the job was taken from is told to stop at its next beat.
    expect(await internal(`/jobs/${job.id}/heartbeat`, { claim: 1, progress: 0.5 })).toMatchObject({
      status: 409,
      body: { status: "processing" },
    });
    await admin.db
      .update(jobs)
      .set({ lastCheckedAt: new Date(Date.now() - CLAIM_TAKEOVER_AFTER_MS - 1000), interruptions: MAX_INTERRUPTIONS })
      .where(eq(jobs.id, job.id));
    expect(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 })).toMatchObject({
      status: 409,
      body: { status: "failed" },
    });
    expect(await readJob(apiKey, job.id)).toMatchObject({
      status: "failed",
      retryCount: 0,
      errorMessage: expect.stringMatching(/interrupted 4 times/),
    });
  });

  it("the sweep deletes dashboard sessions past their expiry and keeps live ones", async () => {
    const { sessions } = await import("../../drizzle/schema");
    const { eq } = await import("drizzle-orm");
    const { createUserWithAccount } = await import("../../worker/dashboard/lib/users");
    const { userId } = await createUserWithAccount(admin.db, {
      email: `sweep-${Date.now()}@example.com`,
      password: "long enough pw",
      plan: "free",
    });
    const session = (token: string, expiresAt: Date) => ({
      userId,
      tokenHash: token,
      csrfToken: token,
      expiresAt,
      absoluteExpiresAt: expiresAt,
    });
    const hour = 60 * 60_000;
    await admin.db
      .insert(sessions)
      .values([
        session(`expired-${userId}`, new Date(Date.now() - hour)),
        session(`live-${userId}`, new Date(Date.now() + hour)),
      ]);
    // Another file's sweep may end the expired session first: what is left says what was done.
    expect((await internal("/sweep", {})).status).toBe(200);
    const left = await admin.db
      .select({ tokenHash: sessions.tokenHash })
      .from(sessions)
      .where(eq(sessions.userId, userId));
    expect(left).toEqual([{ tokenHash: `live-${userId}` }]);
  });
});

describe("webhook delivery attempts", () => {
  it("an attempt the endpoint refuses is retried by QStash, each attempt signed when it is made", async () => {
    const struggling = await startWebhookReceiver({ refuseFirst: 1, holdMs: 1500 });
    try {
      const { apiKey, accountId } = await newAccount();
      const { secret } = await admin.setWebhook(accountId, struggling.url);
      const job = await createJob(apiKey);
      await completeJob(job.id, accountId);
      const [first, retry] = await struggling.waitForAttempts(job.id, 2);
      const verify = (hook: typeof first) =>
        new Webhook(secret).verify(hook.body, hook.headers) as Record<string, unknown>;
      expect(verify(first)).toMatchObject({ event: "job.completed", jobId: job.id });
      expect(verify(retry)).toMatchObject({ event: "job.completed", jobId: job.id });
      expect(retry.headers["webhook-id"]).toBe(first.headers["webhook-id"]);
      // Signed at the attempt, not at publication: a retry hours later is still within tolerance.
      for (const hook of [first, retry]) {
        expect(Math.abs(Number(hook.headers["webhook-timestamp"]) - hook.at / 1000)).toBeLessThan(1.5);
      }
      expect(Number(retry.headers["webhook-timestamp"])).toBeGreaterThan(Number(first.headers["webhook-timestamp"]));
      expect(verify(retry).outputUrl).not.toBe(verify(first).outputUrl);
    } finally {
      await struggling.stop();
    }
  });

  it("the delivery route takes only QStash-signed messages, and gives up on malformed ones at once", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const unsigned = await api().raw({ method: "POST", path: "/internal/webhook-deliveries", json: { jobId: job.id } });
    expectStatus(unsigned, 401);
    const encoderSigned = await internal("/webhook-deliveries", { jobId: job.id });
    expectStatus(encoderSigned, 401);

    const { messageId } = await qstash.publishJSON({
      url: `${stack.apiUrl}/internal/webhook-deliveries`,
      body: { nope: 1 },
      retries: 3,
    });
    const message = await vi.waitFor(
      async () => {
        const current = await messageOf(messageId);
        expect(current.state).toBe("failed");
        return current;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(message).toMatchObject({ state: "failed", lastStatus: 489, retried: 0 });
  });

  it("a QStash message signed for another destination is refused here, and only a finished job's webhook is sent", async () => {
    const { apiKey, accountId } = await newAccount();
    await admin.setWebhook(accountId, hooks.url);
    const job = await createJob(apiKey);
    expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 }), 200);
    // An encoder delivery's body and signature, replayed to the webhook route: the body parses as {jobId}.
    const body = JSON.stringify({ jobId: job.id, dispatch: 0 });
    const post = async (signedFor: string) =>
      api().raw({
        method: "POST",
        path: "/internal/webhook-deliveries",
        headers: {
          "Content-Type": "application/json",
          "Upstash-Signature": await qstashSignature(stack.cloud.qstash.currentSigningKey, signedFor, body),
        },
        body,
      });
    expectStatus(await post(`${stack.encoderUrl}/deliveries/jobs`), 401);
    // Signed for this route, for a job still processing: nothing is sent, and QStash is not asked to retry.
    const ours = await post(`${stack.apiUrl}/internal/webhook-deliveries`);
    expectStatus(ours, 200);
    expect(ours.body).toEqual({ dropped: "the job is processing, not finished" });
    await new Promise((r) => setTimeout(r, 300));
    expect(hooks.received.filter((h) => JSON.parse(h.body).jobId === job.id)).toEqual([]);
  });
});

describe("internal API › only the encoder may call it", () => {
  it("refuses a missing or wrong signature, and is not reachable under /api/v1", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const unsigned = await api().raw({ method: "POST", path: `/internal/jobs/${job.id}/claim`, json: { dispatch: 0 } });
    expectStatus(unsigned, 401);
    const forged = await internal(`/jobs/${job.id}/claim`, { dispatch: 0 }, "wrong-secret-wrong-secret-wrong");
    expectStatus(forged, 401);
    const viaPublic = await api(apiKey).raw({
      method: "POST",
      path: `/api/v1/internal/jobs/${job.id}/claim`,
      json: { dispatch: 0 },
    });
    expectStatus(viaPublic, 404);
    expect((await readJob(apiKey, job.id)).status).toBe("queued");
  });

  it("refuses a signed call sent again (401), which changes nothing; signed afresh, the call is read (and this one, of an earlier claim, refused)", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const row = async () => (await admin.db.select().from(jobs).where(eq(jobs.id, job.id)))[0];
    expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 }), 200);
    const report = { claim: 1, errorMessage: "Download failed: the source answered HTTP 503", retryable: true };
    const retry = await signedInternal(`/jobs/${job.id}/fail`, report);
    expect(bodyOf(await retry(), 200)).toEqual({ status: "queued" });
    expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 1 }), 200);

    // Within the signature's five minutes, the captured report would be taken again.
    const before = await row();
    const replayed = await retry();
    expectStatus(replayed, 401);
    expect(replayed.body).toEqual({ error: "Unauthorized", message: "Replayed internal signature" });
    expect(await row()).toEqual(before);

    const fresh = await internal(`/jobs/${job.id}/fail`, report);
    expect(fresh).toMatchObject({ status: 409, body: { status: "processing" } });
    expect(await row()).toEqual(before);
  });
});

describe("internal API › a completion names the job's own output", () => {
  it("a key outside outputs/<the job's account>/<its id>/ is a 400 and changes nothing; the job's own key completes it", async () => {
    const { apiKey, accountId } = await newAccount();
    const other = await newAccount();
    const [job, sibling] = [await createJob(apiKey), await createJob(apiKey)];
    const theirs = await createJob(other.apiKey);
    expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 }), 200);
    const row = async () => (await admin.db.select().from(jobs).where(eq(jobs.id, job.id)))[0];
    const before = await row();

    const own = outputKeyFor(accountId, job.id, "mp4_264_480p.mp4");
    const foreign = [
      outputKeyFor(other.accountId, theirs.id, "mp4_264_480p.mp4"),
      outputKeyFor(other.accountId, job.id, "mp4_264_480p.mp4"),
      outputKeyFor(accountId, sibling.id, "mp4_264_480p.mp4"),
      `outputs/${accountId}/${job.id}/../../${other.accountId}/${theirs.id}/mp4_264_480p.mp4`,
      `outputs/${accountId}/${job.id}/..`,
      `outputs/${accountId}/${job.id}/%2e%2e/x.mp4`,
      `outputs/${accountId}/${job.id}/`,
      `outputs/${accountId.toUpperCase()}/${job.id}/mp4_264_480p.mp4`,
      `${own}/more`,
      `/${own}`,
      `legacy-bucket/${job.id}.mp4`,
      "",
    ];
    for (const outputKey of foreign) {
      const refused = await internal(`/jobs/${job.id}/complete`, { claim: 1, outputKey, duration: 1 });
      expectStatus(refused, 400, outputKey);
      expect(refused.body, outputKey).toMatchObject({
        error: "Validation error",
        details: [{ field: "outputKey", message: expect.any(String) }],
      });
      // The refusal explains itself without spelling out the storage layout (the leak scan's rule).
      expect(JSON.stringify(refused.body), outputKey).not.toContain("outputs/");
    }
    expect(await row()).toEqual(before);

    expect(bodyOf(await internal(`/jobs/${job.id}/complete`, { claim: 1, outputKey: own, duration: 1 }), 200)).toEqual({
      status: "completed",
    });
    expect((await row()).outputKey).toBe(own);
  });
});
