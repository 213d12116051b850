/**
 * The encoder's moves of a job as its internal routes make them (routes/internal/): a delivery's
 * claim, whole or join, and the two steps every such route shares, a refused move answered as the
 * encoder's 404 or 409, and a finished job's follow-up handed over after the answer.
 */
import { eq } from "drizzle-orm";
import { accounts, type Job } from "../../drizzle/schema";
import { MAX_SOURCE_SECONDS } from "../../domain/plans";
import { ApiError, logJobError } from "../errors";
import type { Services } from "../services";
import * as jobStates from "./job-states";
import { settleEndedJob } from "./split-jobs";
import { notifyJobFinished } from "./webhooks";

/**
 * The job a move applied to; otherwise 404 for an unknown job, or 409, which tells the encoder to
 * stop: the job left the state it was working in (usually: cancelled).
 */
export function movedJob(outcome: jobStates.TransitionOutcome): Job {
  if (outcome.moved) return outcome.job;
  if (!outcome.found) throw ApiError.notFound();
  throw ApiError.conflict(`Job is ${outcome.found}`, { status: outcome.found });
}

/**
 * The webhook goes out after the answer: the encoder's report is settled whatever the queue
 * does. A failure leaves the job in the webhook outbox, which the sweep empties. A split job's
 * leftovers (its parts' messages, its scratch) go the same way (lib/split-jobs.ts).
 */
export function notifyAfterResponse(
  services: Services,
  job: Pick<Job, "id" | "accountId" | "status" | "scratchPendingSince">,
  wait: (work: Promise<unknown>) => void,
) {
  if (job.scratchPendingSince) {
    wait(settleEndedJob(services, job));
    return;
  }
  wait(
    notifyJobFinished(services, job).catch((err) =>
      logJobError("webhook publish failed; the sweep publishes it", job.id, err),
    ),
  );
}

/**
 * A delivery claims the job: its whole (the job's own message) or its join (a split job's, once
 * its parts are done). A claim that would take over the job after its last interruption fails it
 * instead, and is refused as any claim of a job that ended.
 */
export async function claimJob(
  services: Services,
  id: string,
  dispatch: number,
  stage: "whole" | "join",
  wait: (work: Promise<unknown>) => void,
) {
  let outcome = await jobStates.claim(services.db, id, dispatch, stage);
  if (!outcome.moved && outcome.found === "processing") {
    const failed = await jobStates.claimInterrupted(services.db, id, dispatch);
    if (failed.moved) {
      notifyAfterResponse(services, failed.job, wait);
      outcome = { moved: false, found: "failed" };
    }
  }
  const claimed = movedJob(outcome);
  const [account] = await services.db
    .select({ plan: accounts.plan })
    .from(accounts)
    .where(eq(accounts.id, claimed.accountId));
  return {
    job: {
      id: claimed.id,
      /** The attempt at the source (the retries so far); the last one's failure is final. */
      attempt: claimed.retryCount,
      /** The claim's lease, which the encoder's heartbeats and reports name. */
      claim: claimed.lease,
      accountId: claimed.accountId,
      preset: claimed.preset,
      inputUrl: claimed.inputUrl,
      edl: claimed.edl,
      plan: account.plan,
      maxSourceSeconds: MAX_SOURCE_SECONDS[account.plan],
    },
    split: claimed.split,
  };
}
