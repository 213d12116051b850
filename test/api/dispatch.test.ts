import { Client, Receiver } from "@upstash/qstash";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { jobs } from "../../drizzle/schema";
import { expectStatus } from "../support/api-client";
import { admin, api, createJob, internal, newAccount, readJob, stack } from "./harness";

interface Delivery {
  body: string;
  headers: Record<string, string>;
}

async function deliveries(): Promise<Delivery[]> {
  return (await fetch(`${stack.encoderUrl}/deliveries`)).json() as Promise<Delivery[]>;
}

async function deliveryFor(jobId: string): Promise<Delivery> {
  return vi.waitFor(
    async () => {
      const hit = (await deliveries()).find((d) => JSON.parse(d.body).jobId === jobId);
      if (!hit) throw new Error(`no delivery for job ${jobId} yet`);
      return hit;
    },
    { timeout: 10_000, interval: 100 },
  );
}

const messageIdOf = async (jobId: string) =>
  (await admin.db.select({ messageId: jobs.messageId }).from(jobs).where(eq(jobs.id, jobId)))[0].messageId!;

describe("dispatch: accepted jobs go to the encoder through QStash", () => {
  it("a created job is delivered with its id, signed so the real Receiver verifies it, with 3 attempts allowed", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const delivery = await deliveryFor(job.id);
    expect(delivery).toBeDefined();
    expect(JSON.parse(delivery!.body)).toEqual({ jobId: job.id, firstAttempt: 0 });
    const receiver = new Receiver({
      currentSigningKey: stack.cloud.qstash.currentSigningKey,
      nextSigningKey: stack.cloud.qstash.nextSigningKey,
    });
    expect(await receiver.verify({ signature: delivery!.headers["upstash-signature"], body: delivery!.body, url: `${stack.encoderUrl}/deliveries/jobs` })).toBe(true);
    const qstash = new Client({ baseUrl: stack.cloud.qstash.url, token: stack.cloud.qstash.token });
    const message = (await qstash.messages.get(await messageIdOf(job.id))) as unknown as { maxRetries: number; flowControlKey: string; parallelism: number };
    expect(message).toMatchObject({ maxRetries: 2, flowControlKey: "encoder", parallelism: 2 });
  });

  it("a job the sweep dispatches again resumes its attempts: 3 in all, never more", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    await deliveryFor(job.id);
    expect((await internal(`/jobs/${job.id}/claim`, { attempt: 0 })).status).toBe(200);
    await admin.db.update(jobs).set({ lastCheckedAt: new Date(Date.now() - 5 * 60_000) }).where(eq(jobs.id, job.id));
    await internal("/sweep", {});
    const qstash = new Client({ baseUrl: stack.cloud.qstash.url, token: stack.cloud.qstash.token });
    const message = (await qstash.messages.get(await messageIdOf(job.id))) as unknown as { maxRetries: number; body: string };
    // One attempt was spent by the encoder that stopped: this message carries attempts 1 and 2.
    expect(message.maxRetries).toBe(1);
    expect(JSON.parse(message.body)).toEqual({ jobId: job.id, firstAttempt: 1 });
    expect(await readJob(apiKey, job.id)).toMatchObject({ status: "queued", retryCount: 1 });
  });

  it("cancelling a queued job cancels its QStash message: it is never delivered", async () => {
    const { apiKey } = await newAccount("pro");
    const qstash = new Client({ baseUrl: stack.cloud.qstash.url, token: stack.cloud.qstash.token });
    const stateOf = async (jobId: string) => ((await qstash.messages.get(await messageIdOf(jobId))) as unknown as { state: string }).state;
    await fetch(`${stack.encoderUrl}/hold`, { method: "POST" });
    try {
      // Deliveries made from now on stay open, so the encoder's two slots fill up and stay full.
      const first = await createJob(apiKey);
      const second = await createJob(apiKey);
      for (const job of [first, second]) {
        await vi.waitFor(async () => expect(await stateOf(job.id)).not.toBe("waiting"), { timeout: 10_000, interval: 50 });
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
      expect((await deliveries()).some((d) => JSON.parse(d.body).jobId === third.id)).toBe(false);
    } finally {
      await fetch(`${stack.encoderUrl}/release`, { method: "POST" });
    }
  });
});
