import { asc, eq, lt } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { accounts, jobs, type Account, type Job } from "../../drizzle/schema";
import { iso } from "../../domain/time";
import { webhookUrlProblem } from "../../domain/urls";
import type { Env } from "../env";
import type { Services } from "../services";
import { logJobError } from "../errors";
import * as jobStates from "./job-states";
import { outputState } from "./output-links";
import { playbackLink } from "./playback-links";

type WebhookEvent = "job.completed" | "job.failed" | "job.playable";

/** What a webhook message is for: the job's final state (told by its status when sent), or its stream turning playable. */
export type WebhookTopic = "finished" | "playable";

/** How long the account's endpoint has to answer one attempt before QStash tries again. */
const ATTEMPT_TIMEOUT_MS = 15_000;

/**
 * The one step after a job finishes (completed or failed, by the encoder or the sweep): if its
 * account has a webhook now, queue it; either way, take the job out of the outbox. QStash (which
 * retries) carries only the job id: each attempt is built and signed when it is made (see
 * deliverWebhook), so a late retry still has a timestamp inside the receivers' 5-minute
 * tolerance and an outputUrl that has not expired.
 *
 * The transition that finished the job put it in the outbox (`webhook_pending_since`) in the
 * same statement, so if this step fails (the database or QStash down, the Worker gone), the
 * sweep runs it again (publishPendingWebhooks). A publish that succeeded but was not recorded
 * is published again under the same deduplication id, which QStash does not enqueue twice.
 */
export async function notifyJobFinished(
  services: Services,
  job: Pick<Job, "id" | "accountId" | "status">,
): Promise<void> {
  const [account] = await services.db
    .select({ webhookUrl: accounts.webhookUrl, webhookSecret: accounts.webhookSecret })
    .from(accounts)
    .where(eq(accounts.id, job.accountId));
  if (account?.webhookUrl && account.webhookSecret) await services.queue.publishWebhook(job.id, job.status);
  await jobStates.webhookSettled(services.db, job.id);
}

/**
 * The step after a streaming job turns playable (docs/playback.md): its job.playable webhook
 * queued when its account has a webhook, and the job taken out of that outbox either way. As
 * for notifyJobFinished, the statement that made it playable put it there, for the sweep.
 */
export async function notifyJobPlayable(services: Services, job: Pick<Job, "id" | "accountId">): Promise<void> {
  const [account] = await services.db
    .select({ webhookUrl: accounts.webhookUrl, webhookSecret: accounts.webhookSecret })
    .from(accounts)
    .where(eq(accounts.id, job.accountId));
  if (account?.webhookUrl && account.webhookSecret) await services.queue.publishWebhook(job.id, "playable");
  await jobStates.playableWebhookSettled(services.db, job.id);
}

/** A webhook left in the outbox this long was not published by the step that should have (it failed). */
const WEBHOOK_PENDING_GRACE_MS = 10_000;
/** Jobs whose webhooks one sweep publishes at most; the next sweep takes the rest. */
const PENDING_PER_SWEEP = 100;

/** The sweep's part: publishes the webhooks left in either outbox, oldest first. One failure does not stop the others. */
export async function publishPendingWebhooks(
  services: Services,
  now = new Date(),
): Promise<{ settled: number; failed: number }> {
  const before = new Date(now.getTime() - WEBHOOK_PENDING_GRACE_MS);
  const columns = { id: jobs.id, accountId: jobs.accountId, status: jobs.status };
  const [finished, playable] = await Promise.all([
    services.db
      .select(columns)
      .from(jobs)
      .where(lt(jobs.webhookPendingSince, before))
      .orderBy(asc(jobs.webhookPendingSince))
      .limit(PENDING_PER_SWEEP),
    services.db
      .select(columns)
      .from(jobs)
      .where(lt(jobs.playableWebhookPendingSince, before))
      .orderBy(asc(jobs.playableWebhookPendingSince))
      .limit(PENDING_PER_SWEEP),
  ]);
  const outcome = { settled: 0, failed: 0 };
  const pending = [
    ...finished.map((job) => ({ job, publish: () => notifyJobFinished(services, job) })),
    ...playable.map((job) => ({ job, publish: () => notifyJobPlayable(services, job) })),
  ];
  for (const { job, publish } of pending) {
    try {
      await publish();
      outcome.settled += 1;
    } catch (err) {
      outcome.failed += 1;
      logJobError("webhook publish failed; the next sweep tries again", job.id, err);
    }
  }
  return outcome;
}

async function payloadOf(
  services: Services,
  account: Account,
  job: Job,
  topic: WebhookTopic,
): Promise<{ event: WebhookEvent; body: string }> {
  const playback = await playbackLink(services.env, job, account.plan);
  const stream = { playbackUrl: playback?.url ?? null, playbackExpiresAt: iso(playback?.expiresAt) };
  if (topic === "playable") {
    const event = "job.playable";
    const body = JSON.stringify({
      event,
      jobId: job.id,
      status: job.status,
      preset: job.preset,
      ...stream,
      playableAt: iso(job.playableAt),
      createdAt: iso(job.createdAt),
    });
    return { event, body };
  }
  const event: WebhookEvent = job.status === "completed" ? "job.completed" : "job.failed";
  const output = await outputState(services, job, account.plan);
  const signed = output.kind === "signed" ? output.link : null;
  const body = JSON.stringify({
    event,
    jobId: job.id,
    status: job.status,
    preset: job.preset,
    outputUrl: signed?.url ?? null,
    expiresAt: iso(signed?.expiresAt),
    ...stream,
    errorMessage: job.errorMessage,
    duration: job.duration,
    createdAt: iso(job.createdAt),
    completedAt: iso(job.completedAt),
  });
  return { event, body };
}

/** Why a job's webhook of this topic is not for sending now, or null when it is. */
function notForSending(job: Job, topic: WebhookTopic): string | null {
  if (topic === "playable")
    return job.playableAt && (job.status === "processing" || job.status === "completed")
      ? null
      : `the job is ${job.status}${job.playableAt ? "" : ", never playable"}`;
  // Only a finished job was ever published; anything else is a message that was not ours to take.
  return job.status === "completed" || job.status === "failed" ? null : `the job is ${job.status}, not finished`;
}

/** What became of one POST to an endpoint. */
export type SendOutcome = { delivered: true } | { delivered: false; reason: string };

export type AttemptOutcome = SendOutcome | { dropped: string };

/**
 * Why nothing may be sent to `url` now (domain/urls.ts's rules under this deployment's loopback
 * setting), or null. Checked before every send, not only when the URL is set: a URL stored
 * under older rules, by the admin CLI or under another setting gets no request either.
 */
export const unsendableWebhookUrl = (env: Pick<Env, "ALLOW_LOOPBACK_WEBHOOKS">, url: string) =>
  webhookUrlProblem(url, { allowLoopback: env.ALLOW_LOOPBACK_WEBHOOKS });

/**
 * One attempt: POSTs the job's payload, signed now per Standard Webhooks, to the webhook the
 * account has now. The `webhook-id` is the same on every attempt, so receivers can dedupe.
 */
export async function deliverWebhook(
  services: Services,
  jobId: string,
  topic: WebhookTopic = "finished",
  now = new Date(),
): Promise<AttemptOutcome> {
  const [row] = await services.db
    .select({ job: jobs, account: accounts })
    .from(jobs)
    .innerJoin(accounts, eq(accounts.id, jobs.accountId))
    .where(eq(jobs.id, jobId));
  if (!row) return { dropped: "no such job" };
  const { job, account } = row;
  const notNow = notForSending(job, topic);
  if (notNow) return { dropped: notNow };
  if (!account.webhookUrl || !account.webhookSecret) return { dropped: "the account has no webhook now" };
  // Dropped, not failed: QStash would retry a URL that is refused every time.
  const refused = unsendableWebhookUrl(services.env, account.webhookUrl);
  if (refused) {
    console.warn(
      JSON.stringify({ level: "warn", message: "webhook dropped: its URL is refused", jobId, reason: refused }),
    );
    return { dropped: `the webhook URL is refused: ${refused}` };
  }

  const { event, body } = await payloadOf(services, account, job, topic);
  return postSignedWebhook(account.webhookUrl, account.webhookSecret, `msg_${job.id}_${event}`, body, now);
}

/**
 * POSTs `body` to `url` signed per Standard Webhooks with `secret` at `now`; a 2xx is delivered.
 * The caller has checked the URL (unsendableWebhookUrl). A failure names the answer's status,
 * never its body; no connection and no answer in time read alike, so the dashboard's test event
 * does not tell a closed port from a filtered one.
 */
export async function postSignedWebhook(
  url: string,
  secret: string,
  id: string,
  body: string,
  now = new Date(),
): Promise<SendOutcome> {
  const headers = {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, now, body),
  };
  try {
    // Not followed: a 301/302/303 would turn the POST into a GET without the payload, and the
    // page it leads to answering 200 would count as delivered.
    const res = await fetch(url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    await res.body?.cancel();
    if (res.ok) return { delivered: true };
    const redirected = res.status >= 300 && res.status < 400;
    return {
      delivered: false,
      reason: `the endpoint answered ${res.status}${redirected ? " (a redirect, not followed: set the webhook to the URL it leads to)" : ""}`,
    };
  } catch {
    return {
      delivered: false,
      reason: `the endpoint could not be reached or did not answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`,
    };
  }
}
