import type { Services } from "../services";
import { logJobError } from "../errors";
import { publishDispatch } from "./dispatch";
import * as jobStates from "./job-states";
import * as partStates from "./part-states";
import { settleEndedJob } from "./split-jobs";
import { INTERRUPTED_MESSAGE } from "./job-states";
import { notifyJobFinished } from "./webhooks";

/** A job's message QStash gave up on, as its failure callback reports it. */
export interface LostMessage {
  jobId: string;
  /** The part of a split job the message carried, if it carried one (docs/scaling.md). */
  part?: number;
  messageId: string;
  /**
   * The last delivery's answer: its HTTP status, 0 when it got none (the encoder unreachable),
   * or null when unknown (the sweep found the message gone, and no failure callback came).
   */
  lastStatus: number | null;
}

export type LostMessageOutcome = "redispatched" | "failed" | "ignored";

/** Why the job failed, for its reader: never the encoder's address or anything it answered beyond the status. */
function undispatchedMessage(lastStatus: number | null): string {
  return `The job could not be dispatched to an encoder: ${lastWord(lastStatus)}. ${INTERRUPTED_MESSAGE}`;
}

function lastWord(lastStatus: number | null): string {
  if (lastStatus === null) return "its last message was dropped by the queue";
  return lastStatus > 0 ? `its last delivery was answered ${lastStatus}` : "its last delivery got no answer";
}

/**
 * QStash ran out of deliveries for a job's message before any of them left the job with an
 * encoder: the encoder unreachable, or the Worker refusing every claim, for longer than the
 * message's retries. Nothing else would dispatch the job again (it is `queued` with a message
 * id, which the sweep takes for a message still waiting its turn), so the job is dispatched
 * again while interruptions remain, each lost message counting one, and fails once they are
 * spent, its webhook sent as for any failed job. The source's attempts are not touched: no
 * encoder tried it.
 *
 * Only a job still `queued` on this very message moves: one that was claimed meanwhile is the
 * encoder's (a stale one is the sweep's), one that ended or was dispatched again is left alone,
 * so the callback delivered twice, or late, does nothing more.
 */
export async function settleLostMessage(
  services: Services,
  lost: LostMessage,
  now = new Date(),
): Promise<LostMessageOutcome> {
  const { db, queue } = services;
  if (lost.part !== undefined) return settleLostPart(services, { ...lost, part: lost.part }, now);
  // Each move checks the job still waits on this message and its interruptions, in its own statement.
  const requeued = await jobStates.lostMessageRequeue(db, lost.jobId, lost.messageId, now);
  if (requeued.moved) {
    // Should the publish fail, the job is queued without a message: the sweep dispatches it (lib/sweep.ts).
    await jobStates.recordMessage(db, lost.jobId, await publishDispatch(queue, requeued.job));
    return "redispatched";
  }
  if (requeued.found !== "queued") return "ignored";

  const failed = await jobStates.lostMessageFail(
    db,
    lost.jobId,
    lost.messageId,
    undispatchedMessage(lost.lastStatus),
    now,
  );
  if (!failed.moved) return "ignored";
  await notifyJobFinished(services, failed.job).catch((err) =>
    logJobError("webhook publish failed; the sweep publishes it", lost.jobId, err),
  );
  return "failed";
}

/**
 * A part's message lost: an interruption of the part, as a stale part is (lib/part-states.ts),
 * dispatched again while its interruptions remain; after that its job fails. Only a part still
 * queued on this very message moves.
 */
async function settleLostPart(
  services: Services,
  lost: LostMessage & { part: number },
  now: Date,
): Promise<LostMessageOutcome> {
  const moved = await partStates.interruptLostPart(services.db, lost.jobId, lost.part, lost.messageId, now);
  if (!moved.moved) return "ignored";
  if ("failed" in moved) {
    await settleEndedJob(services, moved.failed);
    return "failed";
  }
  // Should the publish fail, the part is queued without a message: the sweep dispatches it.
  const { dispatch } = moved.requeued;
  const messageId = await services.queue.publishPart(lost.jobId, lost.part, dispatch);
  await partStates.recordPartMessages(services.db, lost.jobId, [{ index: lost.part, dispatch, messageId }]);
  return "redispatched";
}
