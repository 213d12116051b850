import { Client, Receiver } from "@upstash/qstash";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { jobs } from "../../drizzle/schema";
import { admin, call, createJob, internal, newAccount, stack } from "./harness";

interface Delivery {
  body: string;
  headers: Record<string, string>;
}

async function deliveries(): Promise<Delivery[]> {
  return (await fetch(`${stack.encoderUrl}/deliveries`)).json() as Promise<Delivery[]>;
}

async function deliveryFor(jobId: string, timeoutMs = 10_000): Promise<Delivery | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const hit = (await deliveries()).find((d) => JSON.parse(d.body).jobId === jobId);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
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
    expect((await call("GET", `/jobs/${job.id}`, { key: apiKey })).body).toMatchObject({ status: "queued", retryCount: 1 });
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
        const deadline = Date.now() + 10_000;
        while ((await stateOf(job.id)) === "waiting" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      }
      const third = await createJob(apiKey);
      expect(await stateOf(third.id)).toBe("waiting");
      const cancel = await call("DELETE", `/jobs/${third.id}`, { key: apiKey });
      expect(cancel.body.message).toMatch(/cancelled successfully/i);
      expect(await stateOf(third.id)).toBe("cancelled");
      await fetch(`${stack.encoderUrl}/release`, { method: "POST" });
      await new Promise((r) => setTimeout(r, 1500));
      expect((await deliveries()).some((d) => JSON.parse(d.body).jobId === third.id)).toBe(false);
    } finally {
      await fetch(`${stack.encoderUrl}/release`, { method: "POST" });
    }
  });
});
