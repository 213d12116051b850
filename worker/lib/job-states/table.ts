/** The contract's job state table (docs/contract.md §4): every move a job can make, and what a move reports. */
import type { Job } from "../../../drizzle/schema";
import { CANCELLABLE_STATUSES, type JobStatus } from "../../../domain/jobs";

interface Transition {
  from: readonly JobStatus[];
  to: JobStatus;
}

/**
 * Every move a job can make after it is created (creation itself, from no state to `queued`, is
 * create.ts). test/api/job-transitions.test.ts walks this table against the database: each
 * transition from each state.
 */
export const TRANSITIONS = {
  /** The queue refused a job just created (docs/contract.md §4.2, row 2): failed, and its quota unit returned. */
  queueRefused: { from: ["queued"], to: "failed" },
  /**
   * The encoder starts an attempt. A job still processing is claimed again by a redelivery of its
   * current message once its heartbeat has stopped: the encoder that had it was interrupted.
   */
  claim: { from: ["queued", "processing"], to: "processing" },
  /** ...unless its interruptions are spent: the source may be what crashes the encoders. */
  claimInterrupted: { from: ["processing"], to: "failed" },
  /** The encoder is still working: no change of state, but only while the job is processing. */
  heartbeat: { from: ["processing"], to: "processing" },
  complete: { from: ["processing"], to: "completed" },
  /** The last attempt failed, or a failure no attempt can fix. */
  fail: { from: ["processing"], to: "failed" },
  /** A failed attempt at the source with attempts left: the job is dispatched again for its retry. */
  retry: { from: ["processing"], to: "queued" },
  cancel: { from: CANCELLABLE_STATUSES, to: "cancelled" },
  /** The sweep: a processing job whose heartbeat stopped goes back to the queue while interruptions remain... */
  sweepRequeue: { from: ["processing"], to: "queued" },
  /** ...and fails once they are spent. */
  sweepFail: { from: ["processing"], to: "failed" },
  /**
   * QStash gave up on a queued job's message (its failure callback, lib/lost-messages.ts): the
   * job is dispatched again while interruptions remain...
   */
  lostMessageRequeue: { from: ["queued"], to: "queued" },
  /** ...and fails once they are spent. */
  lostMessageFail: { from: ["queued"], to: "failed" },
} as const satisfies Record<string, Transition>;

export type TransitionName = keyof typeof TRANSITIONS;

/**
 * A move that did not happen, here and for a split job's parts (lib/part-states.ts): `found` is
 * what the statement found when it judged the move, null when there is no such job (or it
 * belongs to another account).
 */
export type Refusal<Found = JobStatus> = { moved: false; found: Found | null };

export type TransitionOutcome = { moved: true; previous: JobStatus; job: Job } | Refusal;
