import { createServer } from "node:http";
import { Receiver } from "@upstash/qstash";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it, vi } from "vitest";
import { jobs } from "../../drizzle/schema";
import { DISPATCH_RETRY_DELAY, MAX_INTERRUPTIONS } from "../../domain/jobs";
import { INTERRUPTED_MESSAGE } from "../../worker/lib/job-states";
import { DISPATCH_RETRIES } from "../../worker/services/queue";
import { expectStatus } from "../support/api-client";
import { startWebhookReceiver } from "../support/webhook-receiver";
import {
  admin,
  api,
  createJob,
  deliveriesOf,
  internal,
  messageOf,
  newAccount,
  qstash,
  readJob,
  stack,
} from "./harness";

async function deliveryFor(jobId: string) {
  return vi.waitFor(
    async () => {
      const [hit] = await deliveriesOf(jobId);
      if (!hit) throw new Error(`no delivery for job ${jobId} yet`);
      return hit;
    },
    { timeout: 10_000, interval: 100 },
  );
}

const rowOf = async (jobId: string) => (await admin.db.select().from(jobs).where(eq(jobs.id, jobId)))[0];

const messageIdOf = async (jobId: string) =>
  (await admin.db.select({ messageId: jobs.messageId }).from(jobs).where(eq(jobs.id, jobId)))[0].messageId!;

describe("dispatch: accepted jobs go to the encoder through QStash", () => {
  it("a created job is delivered with its id and dispatch, signed so the real Receiver verifies it, redelivered should it go unanswered", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const delivery = await deliveryFor(job.id);
    expect(JSON.parse(delivery.body)).toEqual({ jobId: job.id, dispatch: 0 });
    const receiver = new Receiver({
      currentSigningKey: stack.cloud.qstash.currentSigningKey,
      nextSigningKey: stack.cloud.qstash.nextSigningKey,
    });
    expect(
      await receiver.verify({
        signature: String(delivery.headers["upstash-signature"]),
        body: delivery.body,
        url: `${stack.encoderUrl}/deliveries/jobs`,
      }),
    ).toBe(true);
    const message = await messageOf(await messageIdOf(job.id));
    expect(message).toMatchObject({
      maxRetries: DISPATCH_RETRIES,
      retryDelay: DISPATCH_RETRY_DELAY,
      flowControlKey: "encoder",
      parallelism: 2,
    });
  });

  it("a job the sweep dispatches again was interrupted: its next dispatch, the source's attempts unspent", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    await deliveryFor(job.id);
    expect((await internal(`/jobs/${job.id}/claim`, { dispatch: 0 })).status).toBe(200);
    await admin.db
      .update(jobs)
      .set({ lastCheckedAt: new Date(Date.now() - 5 * 60_000) })
      .where(eq(jobs.id, job.id));
    await internal("/sweep", {});
    const message = await messageOf(await messageIdOf(job.id));
    expect(message.maxRetries).toBe(DISPATCH_RETRIES);
    expect(JSON.parse(message.body)).toEqual({ jobId: job.id, dispatch: 1 });
    expect(await readJob(apiKey, job.id)).toMatchObject({ status: "queued", retryCount: 0 });
    expect(await rowOf(job.id)).toMatchObject({ interruptions: 1, dispatch: 1 });
  });

  it("cancelling a queued job cancels its QStash message: it is never delivered", async () => {
    const { apiKey } = await newAccount("pro");
    const stateOf = async (jobId: string) => (await messageOf(await messageIdOf(jobId))).state;
    await fetch(`${stack.encoderUrl}/hold`, { method: "POST" });
    try {
      // Deliveries made from now on stay open, so the encoder's two slots fill up and stay full.
      const first = await createJob(apiKey);
      const second = await createJob(apiKey);
      for (const job of [first, second]) {
        await vi.waitFor(async () => expect(await stateOf(job.id)).not.toBe("waiting"), {
          timeout: 10_000,
          interval: 50,
        });
      }
      const third = await createJob(apiKey);
      expect(await stateOf(third.id)).toBe("waiting");
      const cancel = await api(apiKey).cancelJob(third.id);
      expectStatus(cancel, 200);
      expect(cancel.body.message).toMatch(/cancelled successfully/i);
      expect(await stateOf(third.id)).toBe("cancelled");
      await fetch(`${stack.encoderUrl}/release`, { method: "POST" });
      // QStash delivers first in, first out: once a job created after it has been delivered, the third's turn has passed.
      await deliveryFor((await createJob(apiKey)).id);
      expect(await deliveriesOf(third.id)).toEqual([]);
    } finally {
      await fetch(`${stack.encoderUrl}/release`, { method: "POST" });
    }
  });
});

const failureCallbackUrl = `${stack.apiUrl}/internal/dispatch-failures`;
const hooks = await startWebhookReceiver();
afterAll(() => hooks.stop());

/**
 * A job's message that QStash gives up on: published as publishJob publishes (its body, its
 * failure callback) to a destination that answers 503, with no retries, and recorded as the
 * job's message before that answer is given, as a message the job waits on is.
 */
async function loseMessage(jobId: string, interruptions: number): Promise<string> {
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const destination = createServer((req, res) => {
    req.resume();
    void answered.then(() => res.writeHead(503).end("encoder busy"));
  });
  await new Promise<void>((r) => destination.listen(0, "127.0.0.1", r));
  try {
    const url = `http://127.0.0.1:${(destination.address() as { port: number }).port}/deliveries/jobs`;
    const { messageId } = await qstash.publishJSON({
      url,
      body: { jobId, dispatch: 0 },
      retries: 0,
      failureCallback: failureCallbackUrl,
    });
    await admin.db.update(jobs).set({ messageId, interruptions }).where(eq(jobs.id, jobId));
    answer();
    await vi.waitFor(async () => expect((await messageOf(messageId)).state).toBe("failed"), {
      timeout: 10_000,
      interval: 50,
    });
    return messageId;
  } finally {
    destination.closeAllConnections();
    destination.close();
  }
}

/** The failure callback's report of `messageId`, sent again: QStash delivers it signed, as it would a second time. */
async function reportAgain(jobId: string, messageId: string, dispatch: number) {
  const sourceBody = Buffer.from(JSON.stringify({ jobId, dispatch })).toString("base64");
  const again = await qstash.publishJSON({
    url: failureCallbackUrl,
    body: { status: 503, retried: 0, maxRetries: 0, sourceMessageId: messageId, sourceBody },
    retries: 0,
  });
  return vi.waitFor(
    async () => {
      const message = await messageOf(again.messageId);
      expect(["delivered", "failed"]).toContain(message.state);
      return message;
    },
    { timeout: 10_000, interval: 50 },
  );
}

describe("dispatch: a message QStash gives up on before an encoder takes the job", () => {
  it("job messages carry the failure callback", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const message = await messageOf(await messageIdOf(job.id));
    expect(message.failureCallback).toBe(failureCallbackUrl);
  });

  it("the job is dispatched again as an interruption, in a new message with the failure callback; the report sent again moves nothing", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    await deliveryFor(job.id);
    const lost = await loseMessage(job.id, 0);
    const next = await vi.waitFor(
      async () => {
        // Null between the requeue and the record of its new message.
        const id = await messageIdOf(job.id);
        expect(id).not.toBeNull();
        expect(id).not.toBe(lost);
        return id;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(await readJob(apiKey, job.id)).toMatchObject({ status: "queued", retryCount: 0 });
    expect(await rowOf(job.id)).toMatchObject({ interruptions: 1, dispatch: 1 });
    const message = await messageOf(next);
    expect(message).toMatchObject({ maxRetries: DISPATCH_RETRIES, failureCallback: failureCallbackUrl });
    expect(JSON.parse(message.body)).toEqual({ jobId: job.id, dispatch: 1 });
    await vi.waitFor(
      async () => expect((await deliveriesOf(job.id)).map((d) => JSON.parse(d.body).dispatch)).toEqual([0, 1]),
      {
        timeout: 10_000,
        interval: 100,
      },
    );

    expect(await reportAgain(job.id, lost, 0)).toMatchObject({ state: "delivered", lastStatus: 200 });
    expect(await messageIdOf(job.id)).toBe(next);
    expect(await rowOf(job.id)).toMatchObject({ status: "queued", interruptions: 1, dispatch: 1 });
  });

  it("once its interruptions are spent the job fails with a readable message, keeps its one quota unit, and its webhook goes out once", async () => {
    const { apiKey, accountId } = await newAccount();
    const { secret } = await admin.setWebhook(accountId, hooks.url);
    const job = await createJob(apiKey);
    await deliveryFor(job.id);
    const lost = await loseMessage(job.id, MAX_INTERRUPTIONS);
    const errorMessage = `The job could not be dispatched to an encoder: its last delivery was answered 503. ${INTERRUPTED_MESSAGE}`;
    const hook = await hooks.waitFor(job.id);
    expect(new Webhook(secret).verify(hook.body, hook.headers)).toMatchObject({
      event: "job.failed",
      jobId: job.id,
      status: "failed",
      errorMessage,
    });
    expect(await readJob(apiKey, job.id)).toMatchObject({
      status: "failed",
      retryCount: 0,
      errorMessage,
      outputUrl: null,
    });
    expect((await admin.showAccount(accountId)).usage.used).toBe(1);

    expect(await reportAgain(job.id, lost, 0)).toMatchObject({
      state: "delivered",
      lastStatus: 200,
    });
    expect(await readJob(apiKey, job.id)).toMatchObject({ status: "failed", errorMessage });
    expect(hooks.received.filter((h) => JSON.parse(h.body).jobId === job.id)).toHaveLength(1);
    expect((await admin.showAccount(accountId)).usage.used).toBe(1);
  });

  it("a job claimed meanwhile is the encoder's: the report moves nothing", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    await deliveryFor(job.id);
    const lost = await messageIdOf(job.id);
    expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 }), 200);
    expect(await reportAgain(job.id, lost, 0)).toMatchObject({ state: "delivered", lastStatus: 200 });
    expect(await readJob(apiKey, job.id)).toMatchObject({ status: "processing", retryCount: 0 });
    expect(await messageIdOf(job.id)).toBe(lost);
  });

  it("the route takes only QStash-signed reports, and gives up on one that names no job message at once", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const report = {
      status: 503,
      sourceMessageId: "msg_x",
      sourceBody: Buffer.from(JSON.stringify({ jobId: job.id })).toString("base64"),
    };
    expectStatus(await api().raw({ method: "POST", path: "/internal/dispatch-failures", json: report }), 401);
    expectStatus(await internal("/dispatch-failures", report), 401);
    for (const body of [
      { ...report, sourceBody: "not base64!" },
      { ...report, sourceBody: Buffer.from("{}").toString("base64") },
      { nope: 1 },
    ]) {
      const { messageId } = await qstash.publishJSON({ url: failureCallbackUrl, body, retries: 3 });
      const message = await vi.waitFor(
        async () => {
          const current = await messageOf(messageId);
          expect(current.state).toBe("failed");
          return current;
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(message).toMatchObject({ lastStatus: 489, retried: 0 });
    }
    expect(await readJob(apiKey, job.id)).toMatchObject({ status: "queued", retryCount: 0 });
  });
});

describe("dispatch: a message QStash dropped whose failure callback never got through (the sweep's backstop)", () => {
  /** Ten minutes and more since the job was queued or last dispatched: the sweep asks QStash about its message. */
  const longWaiting = (jobId: string) =>
    admin.db
      .update(jobs)
      .set({ createdAt: new Date(Date.now() - 11 * 60_000), lastCheckedAt: null })
      .where(eq(jobs.id, jobId));
  /** The job's message delivered (the sink answers 200 and claims nothing): QStash no longer holds it, and the job is still queued. */
  const delivered = (jobId: string) =>
    vi.waitFor(async () => expect((await messageOf(await messageIdOf(jobId))).state).toBe("delivered"), {
      timeout: 10_000,
      interval: 50,
    });
  const sweep = async () => expectStatus(await internal("/sweep", {}), 200);

  it("dispatched again while interruptions remain, then failed with a readable message, keeping its one unit", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    const messages = [await messageIdOf(job.id)];
    for (let interruption = 1; interruption <= MAX_INTERRUPTIONS; interruption++) {
      await delivered(job.id);
      await longWaiting(job.id);
      await sweep();
      expect(await rowOf(job.id)).toMatchObject({ status: "queued", retryCount: 0, interruptions: interruption });
      const next = await messageIdOf(job.id);
      expect(messages).not.toContain(next);
      expect(JSON.parse((await messageOf(next)).body)).toEqual({ jobId: job.id, dispatch: interruption });
      messages.push(next);
    }
    await delivered(job.id);
    await longWaiting(job.id);
    await sweep();
    expect(await readJob(apiKey, job.id)).toMatchObject({
      status: "failed",
      retryCount: 0,
      errorMessage: `The job could not be dispatched to an encoder: its last message was dropped by the queue. ${INTERRUPTED_MESSAGE}`,
    });
    expect((await admin.showAccount(accountId)).usage.used).toBe(1);
  });

  it("a job whose message QStash still holds (waiting its turn) is only asked about, never moved", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    await delivered(job.id);
    // A message of the job's that waits an hour before its first delivery: QStash holds it all along.
    const { messageId } = await qstash.publishJSON({
      url: `${stack.encoderUrl}/deliveries/jobs`,
      body: { jobId: job.id, dispatch: 0 },
      delay: 3600,
    });
    try {
      await admin.db.update(jobs).set({ messageId }).where(eq(jobs.id, job.id));
      await longWaiting(job.id);
      await sweep();
      expect(await readJob(apiKey, job.id)).toMatchObject({ status: "queued", retryCount: 0 });
      expect(await messageIdOf(job.id)).toBe(messageId);
    } finally {
      await qstash.messages.cancel(messageId);
    }
  });
});
