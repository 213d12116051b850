/**
 * The contract's job state table (docs/contract.md §4), and the only code in the Worker
 * that writes a job's `status`. Each transition is one SQL statement, one round trip over
 * Neon's HTTP path: it locks the job's row, moves it only from the states the table allows (and
 * under the transition's own condition, such as a stale heartbeat), and reports the state it
 * found. So two transitions racing for one job (a cancel and a completion) cannot both win, and
 * a refusal says why without a second query. A split job's parts have their own table and
 * statements (lib/part-states.ts), which move the job too, in the same statement as its part:
 * to `queued` for its join when its last part is done (as for a retry), to `failed` when a part
 * has spent its attempts or interruptions.
 */
import { and, eq, getTableColumns, gt, gte, inArray, isNotNull, lt, lte, ne, or, sql, type SQL } from "drizzle-orm";
import type { PgUpdateSetSource } from "drizzle-orm/pg-core";
import { accounts, apiKeys, jobs, usage, type Job, type JobStage } from "../../drizzle/schema";
import { isUuid } from "../../domain/ids";
import {
  CANCELLABLE_STATUSES,
  JOB_DELIVERY_RETRIES,
  type JobStatus,
  MAX_INTERRUPTIONS,
  FINAL_STATUSES,
  outputKeyParts,
} from "../../domain/jobs";
import { PLAN_IDS, type PlanId } from "../../domain/plans";
import type { Caller } from "../context";
import { preparedPerDatabase, renderedPerShape, type Database } from "../services/db";
import { activeKey } from "./callers";
import { claimUnit, unitsUsed } from "./quota";

interface Transition {
  from: readonly JobStatus[];
  to: JobStatus;
}

/**
 * Every move a job can make after it is created (creation itself, from no state to `queued`, is
 * `create` below). test/api/job-transitions.test.ts walks this table against the
 * database: each transition from each state.
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

export type TransitionOutcome =
  | { moved: true; previous: JobStatus; job: Job }
  /** `current` is null when there is no such job (or it belongs to another account). */
  | { moved: false; current: JobStatus | null };

type Changes = Omit<PgUpdateSetSource<typeof jobs>, "status" | "id">;

const jobColumns = getTableColumns(jobs);

interface MoveOptions {
  /** What else must hold, beyond the state, for the move to happen. */
  condition?: SQL;
  /** Give the job's quota unit back, in the same statement, if the job moved. */
  releaseUnit?: boolean;
}

/**
 * `with before as (select … for update), moved as (update … from before where <allowed> returning …)
 * select before.status, moved.* from before left join moved`: the row is locked first, so
 * `before` holds the state the update was judged on (the latest, whatever committed meanwhile),
 * and a refused move still returns it.
 */
async function move(
  db: Database,
  name: TransitionName,
  target: { id: string; accountId?: string },
  changes: Changes,
  options: MoveOptions = {},
): Promise<TransitionOutcome> {
  if (!isUuid(target.id)) return { moved: false, current: null };
  const { from, to } = TRANSITIONS[name];
  // A job that ends leaves its scratch to delete, marked in the same statement (lib/split-jobs.ts):
  // a split job's, and an interrupted one's, whose encoder may have stored pieces before it died
  // that no split recorded.
  const scratch: Changes = FINAL_STATUSES.includes(to)
    ? {
        scratchPendingSince: sql`case when ${jobs.split} is null and ${jobs.interruptions} = 0 then null else ${new Date().toISOString()}::timestamptz end`,
      }
    : {};
  const before = db.$with("before").as(
    db
      .select({
        beforeId: sql<string>`${jobs.id}`.as("before_id"),
        previous: sql<JobStatus>`${jobs.status}`.as("previous"),
      })
      .from(jobs)
      .where(
        and(eq(jobs.id, target.id), target.accountId === undefined ? undefined : eq(jobs.accountId, target.accountId)),
      )
      .for("update"),
  );
  const moved = db.$with("moved").as(
    db
      .update(jobs)
      .set({ ...changes, ...scratch, status: to })
      .from(before)
      .where(and(eq(jobs.id, before.beforeId), inArray(before.previous, [...from]), options.condition))
      .returning(jobColumns),
  );
  // Postgres runs a data-modifying WITH statement whether or not the main query reads it.
  const released = db.$with("released").as(
    db
      .update(usage)
      .set({ count: sql`${usage.count} - 1` })
      .from(moved)
      .where(and(eq(usage.accountId, moved.accountId), eq(usage.period, moved.quotaPeriod), gt(usage.count, 0)))
      .returning({ count: usage.count }),
  );
  const movedJob = Object.fromEntries(
    Object.keys(jobColumns).map((key) => [key, moved[key as keyof typeof jobColumns]]),
  ) as typeof moved._.selectedFields;
  const [row] = await db
    .with(before, moved, ...(options.releaseUnit ? [released] : []))
    .select({ previous: before.previous, job: movedJob })
    .from(before)
    .leftJoin(moved, sql`true`);
  if (!row) return { moved: false, current: null };
  return row.job ? { moved: true, previous: row.previous, job: row.job } : { moved: false, current: row.previous };
}

// ── Creation: (none) → queued ───────────────────────────────────────────────────────────────

/**
 * Whose job it is: a caller already authenticated, or (POST /jobs) an API key that the
 * creation's own statement checks, finding the caller in the same round trip.
 */
export type Creator = { caller: Caller } | { keyHash: string };

export interface NewJob {
  preset: string;
  inputUrl: string;
  clientMetadata: Record<string, unknown> | null;
  edl: unknown;
  createdAt: Date;
}

/** What the caller's plan decides about a creation, for whichever plan the caller turns out to have. */
export interface CreationRules {
  /** The calendar month ("YYYY-MM", UTC) the unit counts against. */
  period: string;
  /** Each plan's units a month. */
  limits: Record<PlanId, number>;
  /** The plans allowed to create this job (those that include its preset). */
  plans: readonly PlanId[];
}

export type Creation =
  | { outcome: "created"; caller: Caller; jobId: string; used: number }
  | { outcome: "quotaUsedUp"; caller: Caller; used: number }
  | { outcome: "presetNotAllowed"; caller: Caller }
  | { outcome: "unknownKey" };

const asJsonb = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/** Which of the two creation statements: for a caller already known, or for a key the statement checks. */
type CreatorKind = "caller" | "key";

/** A value of the creation statement, filled in at each creation. */
const value = (name: string) => sql.placeholder(name);

/** The creator as one row: the caller, its month's units and whether its plan may create the job. None for a key that does not authenticate. */
function creatorRow(kind: CreatorKind, plans: readonly PlanId[]): SQL {
  if (kind === "caller") {
    return sql`select ${value("keyId")}::uuid as key_id, ${value("accountId")}::uuid as account_id, ${value("plan")}::text as plan,
      ${value("webhookUrl")}::text as webhook_url, ${value("callerLimit")}::int as claim_limit, ${value("allowed")}::boolean as allowed`;
  }
  const limit = sql.join(
    PLAN_IDS.map((plan) => sql`when ${plan} then ${value(`limit:${plan}`)}::int`),
    sql` `,
  );
  return sql`select ${apiKeys.id} as key_id, ${accounts.id} as account_id, ${accounts.plan} as plan, ${accounts.webhookUrl} as webhook_url,
      case ${accounts.plan} ${limit} end as claim_limit, ${inArray(accounts.plan, [...plans])} as allowed
    from ${apiKeys} inner join ${accounts} on ${eq(accounts.id, apiKeys.accountId)}
    where ${activeKey(value("keyHash"))}
    limit 1`;
}

/** The creation statement for a creator of `kind` and a preset that `plans` may use; every other value a placeholder. */
function creationStatement(kind: CreatorKind, plans: readonly PlanId[]): SQL {
  const allowedAccount = sql`(select account_id from creator where allowed)`;
  return sql`
    with creator as (${creatorRow(kind, plans)}),
    claim as (${claimUnit({ accountId: allowedAccount, period: value("period"), limit: sql`(select claim_limit from creator where allowed)` })}),
    created as (
      insert into ${jobs} (account_id, status, preset, input_url, client_metadata, edl, quota_period, created_at)
      select ${allowedAccount}, ${"queued" satisfies JobStatus}, ${value("preset")}, ${value("inputUrl")}, ${value("clientMetadata")}::jsonb,
        ${value("edl")}::jsonb, ${value("period")}, ${value("createdAt")}::timestamptz
      from claim
      returning id
    )
    select creator.key_id, creator.account_id, creator.plan, creator.webhook_url, creator.allowed, claim.count as used, created.id
    from creator left join claim on true left join created on true`;
}

type CreationRow = {
  key_id: string | null;
  account_id: string;
  plan: PlanId;
  webhook_url: string | null;
  allowed: boolean;
  used: number | null;
  id: string | null;
};

/**
 * The creation statement, rendered once for each creator kind and list of plans (a handful:
 * presets share their lists); composed afresh, it was about a tenth of a creation's CPU in the Worker.
 */
const runCreation = renderedPerShape<{ kind: CreatorKind; plans: readonly PlanId[] }, CreationRow>(
  ({ kind, plans }) => `${kind}:${plans.join(",")}`,
  ({ kind, plans }) => creationStatement(kind, plans),
);

/**
 * Claims a quota unit and inserts the queued job in one statement: the job is inserted from the
 * claim's row, so only when a unit was taken, and the unit only when the creator's plan allows
 * the job. A creator given by its key is checked in the same statement, so a creation is one
 * round trip over Neon's HTTP path, whoever calls, with no transaction around it: every
 * statement a batch adds (BEGIN, COMMIT, a read) is one more between Neon and Postgres. Only a
 * quota refusal reads the counter afterwards, for its `usage.current`: claims stop at the limit,
 * so what it reads is the count that refused it unless a unit was given back meanwhile, and then
 * it is the count now.
 */
export async function create(db: Database, creator: Creator, job: NewJob, rules: CreationRules): Promise<Creation> {
  const { limits, plans, period } = rules;
  const shared = {
    period,
    preset: job.preset,
    inputUrl: job.inputUrl,
    clientMetadata: asJsonb(job.clientMetadata),
    edl: asJsonb(job.edl),
    createdAt: job.createdAt.toISOString(),
  };
  const [kind, values]: [CreatorKind, Record<string, unknown>] =
    "caller" in creator
      ? [
          "caller",
          {
            ...shared,
            ...creator.caller,
            callerLimit: limits[creator.caller.plan],
            allowed: plans.includes(creator.caller.plan),
          },
        ]
      : [
          "key",
          {
            ...shared,
            keyHash: creator.keyHash,
            ...Object.fromEntries(PLAN_IDS.map((plan) => [`limit:${plan}`, limits[plan]])),
          },
        ];
  const [row] = await runCreation(db, { kind, plans }, values);
  if (!row) return { outcome: "unknownKey" };
  const caller: Caller = { keyId: row.key_id, accountId: row.account_id, plan: row.plan, webhookUrl: row.webhook_url };
  if (!row.allowed) return { outcome: "presetNotAllowed", caller };
  if (row.id !== null) return { outcome: "created", caller, jobId: row.id, used: Number(row.used) };
  const [counter] = await unitsUsed(db, { accountId: caller.accountId, period });
  return { outcome: "quotaUsedUp", caller, used: counter?.count ?? 0 };
}

const messageRecord = preparedPerDatabase((db) =>
  db
    .update(jobs)
    .set({ messageId: sql`${sql.placeholder("messageId")}` })
    .where(eq(jobs.id, sql.placeholder("jobId")))
    .prepare("record_message"),
);

/** Records the queue message that carries the job, so a cancel can delete it. Not a change of state. */
export async function recordMessage(db: Database, jobId: string, messageId: string): Promise<void> {
  await messageRecord(db).execute({ jobId, messageId });
}

/** Takes a finished job's webhook out of the outbox: QStash has it, or there was none to send. Not a change of state. */
export async function webhookSettled(db: Database, jobId: string): Promise<void> {
  await db
    .update(jobs)
    .set({ webhookPendingSince: null })
    .where(and(eq(jobs.id, jobId), isNotNull(jobs.webhookPendingSince)));
}

/**
 * Takes a split job's scratch off the pending list once it is deleted (lib/split-jobs.ts), unless
 * the job's end marked it again after `deletedFrom`, when the deletion began. Not a change of state.
 */
export async function scratchSettled(db: Database, jobId: string, deletedFrom: Date): Promise<void> {
  await db
    .update(jobs)
    .set({ scratchPendingSince: null })
    .where(and(eq(jobs.id, jobId), lte(jobs.scratchPendingSince, deletedFrom)));
}

// ── The transitions ─────────────────────────────────────────────────────────────────────────

/**
 * queued → failed when the queue refused the job; its quota unit is returned in the same
 * statement. Its webhook goes in the outbox as every failed job's does: the sweep publishes it
 * once the queue takes messages again.
 */
export function failUnqueued(db: Database, jobId: string, errorMessage: string, now = new Date()) {
  return move(db, "queueRefused", { id: jobId }, { errorMessage, webhookPendingSince: now }, { releaseUnit: true });
}

/**
 * A processing job whose heartbeat is this old may be claimed by a redelivery of its message: its
 * encoder beats every few seconds, so it has died or lost the Worker. One still beating keeps it.
 */
export const CLAIM_TAKEOVER_AFTER_MS = 10_000;

/** The job's current dispatch is the one this delivery carries: a message of an earlier one claims nothing. */
const currentDispatch = (dispatch: number) => eq(jobs.dispatch, dispatch);
/**
 * The heartbeat or report comes from the job's latest claim, not from an encoder the job was taken
 * from; and not while the job's parts run, when no claim of the job's own is working on it.
 */
const latestClaim = (claim: number) => and(eq(jobs.lease, claim), ne(jobs.stage, "parts"));
const interruptionsLeft = lt(jobs.interruptions, MAX_INTERRUPTIONS);
const interruptionsSpent = gte(jobs.interruptions, MAX_INTERRUPTIONS);
/** An update's expressions read the row as it was: the claim of a job still processing counts its interruption. */
const wasProcessing = sql`${jobs.status} = ${"processing" satisfies JobStatus}`;

/** Why a job whose interruptions are spent failed: the cause is ours or the source's, never the client's network. */
export const INTERRUPTED_MESSAGE =
  `The job was interrupted ${MAX_INTERRUPTIONS + 1} times: the encoder working on it stopped before it could report ` +
  "(the source may be crashing it), or could not be reached.";

/** A split job's share of its progress that its parts make; its join makes the rest (docs/scaling.md). */
export const PARTS_SHARE = 0.9;

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

/** The caller's job only: another account's job is as unknown as a missing one. */
export function cancel(db: Database, target: { id: string; accountId: string }, now = new Date()) {
  return move(db, "cancel", target, { cancelledAt: now });
}

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
