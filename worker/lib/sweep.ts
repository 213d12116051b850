import { and, eq, lt } from "drizzle-orm";
import { accounts, jobs } from "../../drizzle/schema";
import type { Services } from "../context";
import { JOB_DELIVERY_RETRIES } from "../../domain/jobs";
import { notifyWebhook } from "./webhooks";

/** A processing job whose encoder sent no heartbeat for this long is presumed abandoned. */
export const STALE_AFTER_MS = 60_000;

/**
 * The backstop for encoders that died mid-job: their jobs are dispatched again while attempts
 * remain, and failed after that, so no job stays `processing` forever. Each update is
 * conditional on the stale heartbeat, so a job that came back to life is left alone.
 */
export async function sweepStaleJobs(services: Services, now = new Date(), staleAfterMs = STALE_AFTER_MS) {
  const { db, queue } = services;
  const cutoff = new Date(now.getTime() - staleAfterMs);
  const stale = await db
    .select()
    .from(jobs)
    .where(and(eq(jobs.status, "processing"), lt(jobs.lastCheckedAt, cutoff)));

  const outcome = { redispatched: 0, failed: 0 };
  for (const job of stale) {
    const stillStale = and(eq(jobs.id, job.id), eq(jobs.status, "processing"), lt(jobs.lastCheckedAt, cutoff));
    if (job.retryCount < JOB_DELIVERY_RETRIES) {
      const [requeued] = await db
        .update(jobs)
        .set({ status: "queued", retryCount: job.retryCount + 1, lastCheckedAt: now })
        .where(stillStale)
        .returning();
      if (!requeued) continue;
      const messageId = await queue.publishJob(job.id, requeued.retryCount);
      await db.update(jobs).set({ messageId }).where(eq(jobs.id, job.id));
      outcome.redispatched += 1;
    } else {
      const [failed] = await db
        .update(jobs)
        .set({ status: "failed", errorMessage: "The encoder stopped responding while processing this job.", lastCheckedAt: now })
        .where(stillStale)
        .returning();
      if (!failed) continue;
      const [account] = await db.select().from(accounts).where(eq(accounts.id, job.accountId));
      await notifyWebhook(services, account, failed);
      outcome.failed += 1;
    }
  }
  return outcome;
}
