/**
 * The encoder's reports from its latest claim: heartbeats while it works, then the completion,
 * the failure, or the retry of a failure at the source with attempts left.
 */
import { and, eq, lt, ne, sql } from "drizzle-orm";
import { jobs, type JobStage } from "../../../drizzle/schema";
import { JOB_DELIVERY_RETRIES, outputKeyParts } from "../../../domain/jobs";
import type { Database } from "../../services/db";
import { PARTS_SHARE } from "./claims";
import { move } from "./move";

/**
 * The heartbeat or report comes from the job's latest claim, not from an encoder the job was taken
 * from; and not while the job's parts run, when no claim of the job's own is working on it.
 */
const latestClaim = (claim: number) => and(eq(jobs.lease, claim), ne(jobs.stage, "parts"));

/**
 * A beat of a processing job: its progress, and its source's duration once the encoder has
 * probed it (docs/contract.md §3.1: "measured while the job is processed"). A join's progress is
 * the last share of its job's, after the parts' (docs/scaling.md).
 */
export function heartbeat(
  db: Database,
  jobId: string,
  claim: number,
  beat: { progress?: number; duration?: number },
  now = new Date(),
) {
  const { progress, duration } = beat;
  return move(
    db,
    "heartbeat",
    { id: jobId },
    {
      lastCheckedAt: now,
      ...(progress === undefined
        ? {}
        : {
            // While its pieces are stored, the job's progress is its parts' (lib/part-states.ts).
            progress: sql`case when ${jobs.stage} = ${"join" satisfies JobStage} then ${PARTS_SHARE} + ${1 - PARTS_SHARE} * ${progress}::real
              when ${jobs.stage} = ${"cutting" satisfies JobStage} then ${jobs.progress} else ${progress}::real end`,
          }),
      ...(duration === undefined ? {} : { duration }),
    },
    { condition: latestClaim(claim) },
  );
}

/**
 * The transitions that finish a job also put its webhook in the outbox, in the same statement:
 * a webhook cannot be lost between the job's commit and its publication (see lib/webhooks.ts).
 * The output must be the job's own, under its account's and its id's prefix (outputKeyFor), and
 * the report the latest claim's: a processing job refused this move for one of those reasons.
 */
export function complete(
  db: Database,
  jobId: string,
  claim: number,
  output: { outputKey: string; duration: number | null },
  now = new Date(),
) {
  const own = outputKeyParts(output.outputKey);
  return move(
    db,
    "complete",
    { id: jobId },
    {
      outputKey: output.outputKey,
      duration: output.duration,
      completedAt: now,
      lastCheckedAt: now,
      progress: 1,
      storageLayout: "v2",
      webhookPendingSince: now,
    },
    {
      condition: and(
        latestClaim(claim),
        own ? and(eq(jobs.accountId, own.accountId), eq(jobs.id, own.jobId)) : sql`false`,
      ),
    },
  );
}

export function fail(
  db: Database,
  jobId: string,
  claim: number,
  failure: { errorMessage: string; duration: number | null },
  now = new Date(),
) {
  return move(
    db,
    "fail",
    { id: jobId },
    {
      errorMessage: failure.errorMessage,
      duration: failure.duration,
      lastCheckedAt: now,
      webhookPendingSince: now,
    },
    { condition: latestClaim(claim) },
  );
}

/**
 * Another attempt at the source, while attempts remain: the retry counts, and the job waits for
 * its next dispatch (no message until it is recorded, as after the sweep's requeue).
 */
export function retry(db: Database, jobId: string, claim: number, now = new Date()) {
  return move(
    db,
    "retry",
    { id: jobId },
    {
      retryCount: sql`${jobs.retryCount} + 1`,
      dispatch: sql`${jobs.dispatch} + 1`,
      lastCheckedAt: now,
      messageId: null,
    },
    { condition: and(latestClaim(claim), lt(jobs.retryCount, JOB_DELIVERY_RETRIES)) },
  );
}
