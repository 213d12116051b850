import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { accounts, jobs, type Account, type Job } from "../../drizzle/schema";
import { iso } from "../../domain/time";
import type { Services } from "../context";
import { outputState } from "./output-links";

export type WebhookEvent = "job.completed" | "job.failed";

/** How long the account's endpoint has to answer one attempt before QStash tries again. */
const ATTEMPT_TIMEOUT_MS = 15_000;

/**
 * Queues the finished job's webhook. QStash (which retries) carries only the job id: each
 * attempt is built and signed when it is made (see deliverWebhook), so a late retry still has
 * a timestamp inside the receivers' 5-minute tolerance and an outputUrl that has not expired.
 */
export async function notifyWebhook(services: Services, account: Account, job: Job): Promise<void> {
  if (!account.webhookUrl || !account.webhookSecret) return;
  await services.queue.publishWebhook(job.id);
}

async function payloadOf(services: Services, account: Account, job: Job): Promise<{ event: WebhookEvent; body: string }> {
  const event: WebhookEvent = job.status === "completed" ? "job.completed" : "job.failed";
  const output = await outputState(services.storage, job, account.plan);
  const signed = output.kind === "signed" ? output.link : null;
  const body = JSON.stringify({
    event,
    jobId: job.id,
    status: job.status,
    preset: job.preset,
    outputUrl: signed?.url ?? null,
    expiresAt: iso(signed?.expiresAt),
    errorMessage: job.errorMessage,
    duration: job.duration,
    createdAt: iso(job.createdAt),
    completedAt: iso(job.completedAt),
  });
  return { event, body };
}

export type AttemptOutcome = { delivered: true } | { delivered: false; reason: string } | { dropped: string };

/**
 * One attempt: POSTs the job's payload, signed now per Standard Webhooks, to the webhook the
 * account has now. The `webhook-id` is the same on every attempt, so receivers can dedupe.
 */
export async function deliverWebhook(services: Services, jobId: string, now = new Date()): Promise<AttemptOutcome> {
  const [row] = await services.db
    .select({ job: jobs, account: accounts })
    .from(jobs)
    .innerJoin(accounts, eq(accounts.id, jobs.accountId))
    .where(eq(jobs.id, jobId));
  if (!row) return { dropped: "no such job" };
  const { job, account } = row;
  if (!account.webhookUrl || !account.webhookSecret) return { dropped: "the account has no webhook now" };

  const { event, body } = await payloadOf(services, account, job);
  return postSignedWebhook(account.webhookUrl, account.webhookSecret, `msg_${job.id}_${event}`, body, now);
}

/** POSTs `body` to `url` signed per Standard Webhooks with `secret` at `now`; a 2xx is delivered. */
export async function postSignedWebhook(
  url: string,
  secret: string,
  id: string,
  body: string,
  now = new Date(),
): Promise<{ delivered: true } | { delivered: false; reason: string }> {
  const headers = {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, now, body),
  };
  try {
    const res = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS) });
    await res.body?.cancel();
    return res.ok ? { delivered: true } : { delivered: false, reason: `the endpoint answered ${res.status}` };
  } catch (err) {
    return { delivered: false, reason: err instanceof Error && err.name === "TimeoutError" ? "the endpoint timed out" : "the endpoint could not be reached" };
  }
}
