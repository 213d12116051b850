/**
 * What a split job leaves behind when it ends, however it ends (docs/scaling.md): its parts'
 * messages still queued, and everything under its scratch prefix. The transition that ends it
 * marks its scratch pending in the same statement (`scratch_pending_since`), so a deletion that
 * fails, or never runs, is the sweep's to retry.
 */
import { and, asc, isNotNull, lt } from "drizzle-orm";
import { jobs, type Job } from "../../drizzle/schema";
import { scratchPrefix } from "../../domain/split";
import { streamPrefix } from "../../domain/stream/layout";
import { logJobError } from "../errors";
import type { Services } from "../services";
import { scratchSettled } from "./job-states";
import { partMessages } from "./part-states";
import { notifyJobFinished } from "./webhooks";

/**
 * Deletes the job's scratch, and the stream of one that did not complete (docs/playback.md), then
 * takes it off the pending list if it was marked at least SCRATCH_PENDING_GRACE_MS before. So the
 * deletion made as the job ends leaves the mark for the sweep's, after the grace: an upload its
 * encoder gave up as the job ended can still land in storage after the first deletion.
 */
export async function deleteScratch(
  services: Services,
  job: Pick<Job, "id" | "accountId" | "status">,
  now = new Date(),
): Promise<number> {
  let deleted = await services.storage.deleteUnder(scratchPrefix(job.id));
  if (job.status !== "completed") deleted += await services.storage.deleteUnder(streamPrefix(job.accountId, job.id));
  await scratchSettled(services.db, job.id, new Date(now.getTime() - SCRATCH_PENDING_GRACE_MS));
  return deleted;
}

/** Deletes the parts' messages still queued: a job that ended has nothing more for them to do. */
async function deletePartMessages(services: Services, jobId: string): Promise<void> {
  const held = await partMessages(services.db, jobId);
  // A message already delivered or gone is no loss: its claim is refused (the job has ended).
  await Promise.all(held.map((id) => services.queue.deleteMessage(id).catch(() => undefined)));
}

/**
 * After a job with scratch to delete ended (a split job, an interrupted one, one that ended while
 * an encoder held it; cancelled, failed or completed): its webhook when it has one to send,
 * its parts' messages deleted, its scratch deleted. Each step's failure is logged and left to
 * the sweep (the webhook and scratch outboxes); a message left queued is refused at its claim.
 */
export async function settleEndedJob(services: Services, job: Pick<Job, "id" | "accountId" | "status">): Promise<void> {
  const steps: Promise<unknown>[] = [
    deletePartMessages(services, job.id).catch((err) =>
      logJobError("a split job's part messages could not be deleted", job.id, err),
    ),
    deleteScratch(services, job).catch((err) =>
      logJobError("a job's scratch could not be deleted; the sweep deletes it", job.id, err),
    ),
  ];
  if (job.status !== "cancelled") {
    steps.push(
      notifyJobFinished(services, job).catch((err) =>
        logJobError("webhook publish failed; the sweep publishes it", job.id, err),
      ),
    );
  }
  await Promise.all(steps);
}

/**
 * How long after a job's end the sweep deletes its scratch again: past any upload its encoder was
 * making as the job ended, and past a first deletion that failed.
 */
const SCRATCH_PENDING_GRACE_MS = 10_000;
/**
 * Jobs whose scratch one sweep deletes at most; the next sweep takes the rest. Every split job
 * that ends comes here once (the deletion past the grace), so the bound is the other outboxes'.
 */
const SCRATCH_PER_SWEEP = 100;

/** The sweep's part: deletes the scratch of split jobs that ended, oldest first. One failure does not stop the others. */
export async function deletePendingScratch(
  services: Services,
  now = new Date(),
): Promise<{ deleted: number; failed: number }> {
  const pending = await services.db
    .select({ id: jobs.id, accountId: jobs.accountId, status: jobs.status })
    .from(jobs)
    .where(
      and(
        isNotNull(jobs.scratchPendingSince),
        lt(jobs.scratchPendingSince, new Date(now.getTime() - SCRATCH_PENDING_GRACE_MS)),
      ),
    )
    .orderBy(asc(jobs.scratchPendingSince))
    .limit(SCRATCH_PER_SWEEP);
  const outcome = { deleted: 0, failed: 0 };
  for (const job of pending) {
    try {
      await deleteScratch(services, job, now);
      outcome.deleted += 1;
    } catch (err) {
      outcome.failed += 1;
      logJobError("sweep: a job's scratch could not be deleted; the next sweep tries again", job.id, err);
    }
  }
  return outcome;
}
