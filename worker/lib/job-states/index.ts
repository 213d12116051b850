/**
 * The contract's job state table (docs/contract.md §4), and the only code in the Worker that
 * writes the jobs table, with a split job's parts' statements (lib/part-states.ts):
 * test/unit/worker/job-writes.test.ts checks that nothing else does. One concern a file: the
 * table and what a move reports (table.ts), the one statement every transition is (move.ts),
 * creation with its quota claim (create.ts), each family of transitions (claims.ts, reports.ts,
 * cancel.ts, queue-refusal.ts, interruptions.ts), and the writes that are not a change of state
 * (bookkeeping.ts; a streaming output's layout and playable moment, stream.ts).
 */
export { recordMessage, scratchSettled, webhookSettled } from "./bookkeeping";
export { cancel } from "./cancel";
export { CLAIM_TAKEOVER_AFTER_MS, claim, claimInterrupted, PARTS_SHARE } from "./claims";
export { create, type Creator } from "./create";
export { INTERRUPTED_MESSAGE, lostMessageFail, lostMessageRequeue, sweepFail, sweepRequeue } from "./interruptions";
export { failUnqueued } from "./queue-refusal";
export { complete, fail, heartbeat, retry } from "./reports";
export { markPlayable, playableWebhookSettled, recordStreamLayout } from "./stream";
export { type Refusal, TRANSITIONS, type TransitionName, type TransitionOutcome } from "./table";
