import { and, eq, lt } from "drizzle-orm";
import { jobs } from "../../drizzle/schema";
import { JOB_DELIVERY_RETRIES } from "../../domain/jobs";
import type { Services } from "../context";
import * as jobStates from "./job-states";
import { notifyJobFinished } from "./webhooks";

/** A processing job whose encoder sent no heartbeat for this long is presumed abandoned. */
export const STALE_AFTER_MS = 60_000;

/**
 * The backstop for encoders that died mid-job: their jobs are dispatched again while attempts
 * remain, and failed after that, so no job stays `processing` forever. Each move is conditional
 * on the stale heartbeat, so a job that came back to life is left alone.
 */
export async function sweepStaleJobs(services: Services, now = new Date(), staleAfterMs = STALE_AFTER_MS) {
  const { db, queue } = services;
  const cutoff = new Date(now.getTime() - staleAfterMs);
  const stale = await db
    .select({ id: jobs.id, retryCount: jobs.retryCount })
    .from(jobs)
    .where(and(eq(jobs.status, "processing"), lt(jobs.lastCheckedAt, cutoff)));

  const outcome = { redispatched: 0, failed: 0 };
  for (const { id, retryCount } of stale) {
    if (retryCount < JOB_DELIVERY_RETRIES) {
      const requeued = await jobStates.sweepRequeue(db, id, cutoff, now);
      if (!requeued.moved) continue;
      await jobStates.recordMessage(db, id, await queue.publishJob(id, requeued.job.retryCount));
      outcome.redispatched += 1;
    } else {
      const failed = await jobStates.sweepFail(db, id, cutoff, now);
      if (!failed.moved) continue;
      await notifyJobFinished(services, failed.job);
      outcome.failed += 1;
    }
  }
  return outcome;
}
