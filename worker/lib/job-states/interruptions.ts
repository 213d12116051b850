/**
 * An attempt that ended without a report: the sweep's moves of a job whose heartbeat stopped, and
 * a lost message's (QStash gave up on it). Each is an interruption, bounded on its own
 * (MAX_INTERRUPTIONS), apart from the attempts at the source.
 */
import { and, eq, gte, lt, ne, sql } from "drizzle-orm";
import { jobs } from "../../../drizzle/schema";
import { MAX_INTERRUPTIONS } from "../../../domain/jobs";
import type { Database } from "../../services/db";
import { move } from "./move";

/** Whether the job may be interrupted once more, or has spent its interruptions: the claims' takeover judges by them too. */
export const interruptionsLeft = lt(jobs.interruptions, MAX_INTERRUPTIONS);
export const interruptionsSpent = gte(jobs.interruptions, MAX_INTERRUPTIONS);

/** Why a job whose interruptions are spent failed: the cause is ours or the source's, never the client's network. */
export const INTERRUPTED_MESSAGE =
  `The job was interrupted ${MAX_INTERRUPTIONS + 1} times: the encoder working on it stopped before it could report ` +
  "(the source may be crashing it), or could not be reached.";

/** One more interruption, and the next dispatch: the job's messages so far are spent. */
const interrupted = { interruptions: sql`${jobs.interruptions} + 1`, dispatch: sql`${jobs.dispatch} + 1` };

/**
 * Stale: processing with no heartbeat since `cutoff`. A job that came back to life is left alone,
 * and so is one whose parts run: they are watched instead (lib/part-states.ts).
 */
const staleSince = (cutoff: Date) => and(lt(jobs.lastCheckedAt, cutoff), ne(jobs.stage, "parts"));

/**
 * Back to the queue without a message: the old one is spent. `messageId` stays null until the
 * new message is recorded, which is how the sweep finds a job whose dispatch was lost.
 */
export function sweepRequeue(db: Database, jobId: string, cutoff: Date, now = new Date()) {
  return move(
    db,
    "sweepRequeue",
    { id: jobId },
    // A new lease: the encoder gone quiet is refused should it report after all.
    { ...interrupted, lease: sql`${jobs.lease} + 1`, lastCheckedAt: now, messageId: null },
    { condition: and(staleSince(cutoff), interruptionsLeft) },
  );
}

export function sweepFail(db: Database, jobId: string, cutoff: Date, now = new Date()) {
  return move(
    db,
    "sweepFail",
    { id: jobId },
    { errorMessage: INTERRUPTED_MESSAGE, lastCheckedAt: now, webhookPendingSince: now },
    { condition: and(staleSince(cutoff), interruptionsSpent) },
  );
}

/**
 * The job still waits on the message QStash gave up on. A job dispatched again since (another
 * message, or none yet while its publish is under way) is not this message's to move: so a
 * failure callback delivered twice moves the job once.
 */
const waitsOn = (messageId: string) => eq(jobs.messageId, messageId);

/**
 * A lost message is an interruption, as a stale heartbeat is: the job's messages end however
 * often they are lost. Like the sweep's requeue, the message id is cleared until the new one is
 * recorded.
 */
export function lostMessageRequeue(db: Database, jobId: string, messageId: string, now = new Date()) {
  return move(
    db,
    "lostMessageRequeue",
    { id: jobId },
    { ...interrupted, lastCheckedAt: now, messageId: null },
    { condition: and(waitsOn(messageId), interruptionsLeft) },
  );
}

/** The job keeps its quota unit, as any job that fails after it was queued does. */
export function lostMessageFail(
  db: Database,
  jobId: string,
  messageId: string,
  errorMessage: string,
  now = new Date(),
) {
  return move(
    db,
    "lostMessageFail",
    { id: jobId },
    { errorMessage, lastCheckedAt: now, webhookPendingSince: now },
    { condition: and(waitsOn(messageId), interruptionsSpent) },
  );
}
