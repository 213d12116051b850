/**
 * The encoder's claims: a delivery of the job's current message starts an attempt, at the whole
 * job or at a split job's join, taking over a job whose encoder went quiet; once the job's
 * interruptions are spent, that takeover fails the job instead.
 */
import { and, eq, inArray, lt, ne, or, sql } from "drizzle-orm";
import { jobs } from "../../../drizzle/schema";
import type { JobStatus } from "../../../domain/jobs";
import type { Database } from "../../services/db";
import { INTERRUPTED_MESSAGE, interruptionsLeft, interruptionsSpent } from "./interruptions";
import { move } from "./move";

/**
 * A processing job whose heartbeat is this old may be claimed by a redelivery of its message: its
 * encoder beats every few seconds, so it has died or lost the Worker. One still beating keeps it.
 */
export const CLAIM_TAKEOVER_AFTER_MS = 10_000;

/** A split job's share of its progress that its parts make; its join makes the rest (docs/scaling.md). */
export const PARTS_SHARE = 0.9;

/** The job's current dispatch is the one this delivery carries: a message of an earlier one claims nothing. */
const currentDispatch = (dispatch: number) => eq(jobs.dispatch, dispatch);
/** An update's expressions read the row as it was: the claim of a job still processing counts its interruption. */
const wasProcessing = sql`${jobs.status} = ${"processing" satisfies JobStatus}`;

/**
 * The encoder starts an attempt: at the whole job (`whole`, the job's own message), or at a split
 * job's join (`join`, the join's message): each delivery claims only the stage its message is for.
 */
export function claim(db: Database, jobId: string, dispatch: number, stage: "whole" | "join", now = new Date()) {
  const takeoverBefore = new Date(now.getTime() - CLAIM_TAKEOVER_AFTER_MS);
  return move(
    db,
    "claim",
    { id: jobId },
    {
      startedAt: sql`coalesce(${jobs.startedAt}, ${now.toISOString()}::timestamptz)`,
      lastCheckedAt: now,
      progress: stage === "join" ? PARTS_SHARE : 0,
      lease: sql`${jobs.lease} + 1`,
      interruptions: sql`${jobs.interruptions} + case when ${wasProcessing} then 1 else 0 end`,
      stage,
    },
    {
      condition: and(
        currentDispatch(dispatch),
        // A job whose splitting encoder was interrupted while it stored pieces is split afresh.
        stage === "whole" ? inArray(jobs.stage, ["whole", "cutting"]) : eq(jobs.stage, stage),
        or(eq(jobs.status, "queued"), and(lt(jobs.lastCheckedAt, takeoverBefore), interruptionsLeft)),
      ),
    },
  );
}

/** The claim a redelivery would make after the job's last interruption: the job fails instead. */
export function claimInterrupted(db: Database, jobId: string, dispatch: number, now = new Date()) {
  const takeoverBefore = new Date(now.getTime() - CLAIM_TAKEOVER_AFTER_MS);
  return move(
    db,
    "claimInterrupted",
    { id: jobId },
    { errorMessage: INTERRUPTED_MESSAGE, lastCheckedAt: now, webhookPendingSince: now },
    {
      condition: and(
        currentDispatch(dispatch),
        ne(jobs.stage, "parts"),
        lt(jobs.lastCheckedAt, takeoverBefore),
        interruptionsSpent,
      ),
    },
  );
}
