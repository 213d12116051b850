import { and, asc, eq, isNotNull, isNull, lt, ne, sql } from "drizzle-orm";
import { jobs, sessions } from "../../drizzle/schema";
import { MAX_INTERRUPTIONS } from "../../domain/jobs";
import type { Services } from "../services";
import { logJobError } from "../errors";
import { describeError } from "../services/error-log";
import { publishDispatch } from "./dispatch";
import * as jobStates from "./job-states";
import { settleLostMessage } from "./lost-messages";
import * as partStates from "./part-states";
import { deletePendingScratch, settleEndedJob } from "./split-jobs";
import { sweepUploads } from "./uploads";
import { notifyJobFinished, publishPendingWebhooks } from "./webhooks";

/** A processing job whose encoder sent no heartbeat for this long is presumed abandoned. */
const STALE_AFTER_MS = 60_000;
/**
 * A queued job without a recorded message this long after it was queued lost its dispatch (the
 * publish or its record failed); creation and the sweep's own requeue record theirs in well
 * under a second.
 */
const UNDISPATCHED_AFTER_MS = 30_000;
/** Jobs one sweep dispatches again at most; the next sweep takes the rest. */
const DISPATCHES_PER_SWEEP = 100;
/**
 * A queued job whose message QStash has not delivered this long after it was queued is asked
 * about: its message may be lost (see dropped messages below). Far beyond the few minutes a
 * message's deliveries and its failure callback's take; a job still waiting its turn in a
 * backlog is only asked about, never moved.
 */
const ASK_ABOUT_MESSAGE_AFTER_MS = 10 * 60_000;
/** Messages one sweep asks QStash about at most, the oldest jobs first. */
const MESSAGE_CHECKS_PER_SWEEP = 20;

/**
 * The cron's sweep (every minute), the backstop for every step that can be interrupted: jobs of
 * encoders that died mid-job, dispatches lost between a job's queueing and its message,
 * messages QStash dropped without a failure callback that arrived, webhooks lost between a
 * job's end (or its first playable moment) and their publication, scratch and streams of ended
 * jobs not yet deleted, and direct uploads: abandoned ones past their expiry, completed ones past
 * their retention. A failure on one job is logged and left for the next sweep; it does not stop
 * the others.
 */
export async function sweep(services: Services, now = new Date()) {
  const stale = await step("stale jobs", () => sweepStaleJobs(services, now), { redispatched: 0, failed: 0 });
  const dispatched = await step("lost dispatches", () => dispatchUndispatched(services, now), 0);
  const dropped = await step("dropped messages", () => settleDroppedMessages(services, now), {
    redispatched: 0,
    failed: 0,
  });
  const parts = await step("stale parts", () => sweepStaleParts(services, now), { redispatched: 0, failed: 0 });
  const partsDispatched = await step("lost part dispatches", () => dispatchUndispatchedParts(services, now), 0);
  const partsDropped = await step("dropped part messages", () => settleDroppedPartMessages(services, now), {
    redispatched: 0,
    failed: 0,
  });
  const webhooks = await step("pending webhooks", () => publishPendingWebhooks(services, now), {
    settled: 0,
    failed: 0,
  });
  const scratch = await step("pending scratch", () => deletePendingScratch(services, now), { deleted: 0, failed: 0 });
  const sessionsEnded = await step("expired dashboard sessions", () => endExpiredSessions(services, now), 0);
  const uploads = await step("uploads", () => sweepUploads(services, now), { expired: 0, deleted: 0, failed: 0 });
  return {
    ...stale,
    dispatched,
    dropped,
    parts,
    partsDispatched,
    partsDropped,
    webhooks,
    scratch,
    sessionsEnded,
    uploads,
  };
}

/** One step of the sweep: one that cannot even list its jobs (the database down) is logged, and the next steps still run. */
async function step<T>(name: string, work: () => Promise<T>, nothingDone: T): Promise<T> {
  try {
    return await work();
  } catch (err) {
    console.error(
      JSON.stringify({
        level: "error",
        msg: `sweep: ${name} not swept; the next sweep tries again`,
        error: describeError(err),
      }),
    );
    return nothingDone;
  }
}

/** When a queued job last changed: its creation, or its return to the queue for another attempt. */
const queuedSince = sql<Date>`coalesce(${jobs.lastCheckedAt}, ${jobs.createdAt})`;

/**
 * Jobs of encoders that died: dispatched again while interruptions remain, failed after that, so
 * no job stays `processing` forever. Each move is conditional on the stale heartbeat, so a job
 * that came back to life is left alone.
 */
async function sweepStaleJobs(services: Services, now: Date) {
  const { db, queue } = services;
  const cutoff = new Date(now.getTime() - STALE_AFTER_MS);
  const stale = await db
    .select({ id: jobs.id, interruptions: jobs.interruptions })
    .from(jobs)
    // A job whose parts run is not stale as a job: its parts are watched instead (sweepStaleParts).
    .where(and(eq(jobs.status, "processing"), ne(jobs.stage, "parts"), lt(jobs.lastCheckedAt, cutoff)));

  const outcome = { redispatched: 0, failed: 0 };
  for (const { id, interruptions } of stale) {
    try {
      if (interruptions < MAX_INTERRUPTIONS) {
        const requeued = await jobStates.sweepRequeue(db, id, cutoff, now);
        if (!requeued.moved) continue;
        outcome.redispatched += 1;
        await jobStates.recordMessage(db, id, await publishDispatch(queue, requeued.job));
      } else {
        const failed = await jobStates.sweepFail(db, id, cutoff, now);
        if (!failed.moved) continue;
        outcome.failed += 1;
        await notifyJobFinished(services, failed.job);
      }
    } catch (err) {
      // The move is committed or not; what it left undone (a dispatch, a webhook) the next sweep finds.
      logJobError("sweep: a stale job was not settled; the next sweep tries again", id, err);
    }
  }
  return outcome;
}

/**
 * Queued jobs whose message was never recorded: the publish failed after a sweep's requeue, or
 * the Worker failed between creating a job and recording its message. Published again under
 * the dispatch's deduplication id, so a message that did reach QStash is not enqueued twice.
 */
async function dispatchUndispatched(services: Services, now: Date): Promise<number> {
  const { db, queue } = services;
  const cutoff = new Date(now.getTime() - UNDISPATCHED_AFTER_MS);
  const lost = await db
    .select({ id: jobs.id, dispatch: jobs.dispatch, stage: jobs.stage })
    .from(jobs)
    .where(
      and(
        eq(jobs.status, "queued"),
        isNull(jobs.messageId),
        lt(queuedSince, sql`${cutoff.toISOString()}::timestamptz`),
      ),
    )
    .orderBy(asc(jobs.createdAt))
    .limit(DISPATCHES_PER_SWEEP);
  let dispatched = 0;
  for (const job of lost) {
    const { id } = job;
    try {
      await jobStates.recordMessage(db, id, await publishDispatch(queue, job));
      dispatched += 1;
    } catch (err) {
      logJobError("sweep: a queued job could not be dispatched; the next sweep tries again", id, err);
    }
  }
  return dispatched;
}

/**
 * Queued jobs whose message QStash no longer holds: it gave up on the message and its failure
 * callback, the one report of that, never got through (the Worker or its database down for all
 * of the callback's deliveries). Nothing else would move such a job. It is settled as the
 * callback would have settled it (lib/lost-messages.ts): dispatched again while interruptions
 * remain, failed after. A message delivered meanwhile has moved its job out of `queued`, which
 * the settling checks in its own statement.
 */
async function settleDroppedMessages(services: Services, now: Date) {
  const { db, queue } = services;
  const cutoff = new Date(now.getTime() - ASK_ABOUT_MESSAGE_AFTER_MS);
  const waiting = await db
    .select({ id: jobs.id, messageId: jobs.messageId })
    .from(jobs)
    .where(
      and(
        eq(jobs.status, "queued"),
        isNotNull(jobs.messageId),
        lt(queuedSince, sql`${cutoff.toISOString()}::timestamptz`),
      ),
    )
    .orderBy(asc(queuedSince))
    .limit(MESSAGE_CHECKS_PER_SWEEP);
  const outcome = { redispatched: 0, failed: 0 };
  for (const { id, messageId } of waiting) {
    if (!messageId) continue;
    try {
      if (await queue.holdsMessage(messageId)) continue;
      const settled = await settleLostMessage(services, { jobId: id, messageId, lastStatus: null }, now);
      if (settled !== "ignored") outcome[settled] += 1;
    } catch (err) {
      logJobError("sweep: a queued job's message could not be checked; the next sweep tries again", id, err);
    }
  }
  return outcome;
}

/**
 * Parts of encoders that died (docs/scaling.md): each is an interruption of its part, which is
 * dispatched again while its interruptions remain; after that its job fails. Each move is
 * conditional on the stale heartbeat, so a part that came back to life is left alone.
 */
async function sweepStaleParts(services: Services, now: Date) {
  const { db } = services;
  const cutoff = new Date(now.getTime() - STALE_AFTER_MS);
  const outcome = { redispatched: 0, failed: 0 };
  for (const { jobId, index } of await partStates.staleParts(db, cutoff, DISPATCHES_PER_SWEEP)) {
    try {
      const moved = await partStates.interruptStalePart(db, jobId, index, cutoff, now);
      if (!moved.moved) continue;
      if ("failed" in moved) {
        outcome.failed += 1;
        await settleEndedJob(services, moved.failed);
      } else {
        outcome.redispatched += 1;
        const { dispatch } = moved.requeued;
        const messageId = await services.queue.publishPart(jobId, index, dispatch);
        await partStates.recordPartMessages(db, jobId, [{ index, dispatch, messageId }]);
      }
    } catch (err) {
      logJobError(`sweep: stale part ${index} was not settled; the next sweep tries again`, jobId, err);
    }
  }
  return outcome;
}

/** Queued parts whose message was never recorded (its publish failed), published again under its deduplication id. */
async function dispatchUndispatchedParts(services: Services, now: Date): Promise<number> {
  const { db } = services;
  const cutoff = new Date(now.getTime() - UNDISPATCHED_AFTER_MS);
  let dispatched = 0;
  for (const { jobId, index, dispatch } of await partStates.partsLeftUndispatched(db, cutoff, DISPATCHES_PER_SWEEP)) {
    try {
      const messageId = await services.queue.publishPart(jobId, index, dispatch);
      await partStates.recordPartMessages(db, jobId, [{ index, dispatch, messageId }]);
      dispatched += 1;
    } catch (err) {
      logJobError(`sweep: queued part ${index} could not be dispatched; the next sweep tries again`, jobId, err);
    }
  }
  return dispatched;
}

/**
 * Queued parts whose message QStash no longer holds, its failure callback never having got
 * through: settled as the callback would have settled them (lib/lost-messages.ts), as dropped
 * job messages are.
 */
async function settleDroppedPartMessages(services: Services, now: Date) {
  const cutoff = new Date(now.getTime() - ASK_ABOUT_MESSAGE_AFTER_MS);
  const outcome = { redispatched: 0, failed: 0 };
  for (const { jobId, index, messageId } of await partStates.partsLongWaiting(
    services.db,
    cutoff,
    MESSAGE_CHECKS_PER_SWEEP,
  )) {
    try {
      if (await services.queue.holdsMessage(messageId)) continue;
      const settled = await settleLostMessage(services, { jobId, part: index, messageId, lastStatus: null }, now);
      if (settled !== "ignored") outcome[settled] += 1;
    } catch (err) {
      logJobError(`sweep: queued part ${index}'s message could not be checked; the next sweep tries again`, jobId, err);
    }
  }
  return outcome;
}

/** Dashboard sessions past their expiry: a sign-in that never signed out would otherwise stay a row forever. */
async function endExpiredSessions({ db }: Services, now: Date): Promise<number> {
  const ended = await db.delete(sessions).where(lt(sessions.expiresAt, now)).returning({ id: sessions.id });
  return ended.length;
}
