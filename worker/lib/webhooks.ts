import { Webhook } from "standardwebhooks";
import type { Account, Job } from "../../drizzle/schema";
import { iso } from "../../domain/time";
import type { Services } from "../context";
import { outputState } from "./output-links";

export type WebhookEvent = "job.completed" | "job.failed";

/**
 * Sends the finished job to the account's webhook through QStash (which retries delivery),
 * signed per Standard Webhooks so any `standardwebhooks` library verifies it.
 */
export async function notifyWebhook(services: Services, account: Account, job: Job): Promise<void> {
  if (!account.webhookUrl || !account.webhookSecret) return;
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
  const id = `msg_${job.id}_${event}`;
  const timestamp = new Date();
  const signature = new Webhook(account.webhookSecret).sign(id, timestamp, body);
  await services.queue.publishWebhook(account.webhookUrl, body, {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
    "webhook-signature": signature,
  });
}
