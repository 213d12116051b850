/**
 * A split job's parts (docs/scaling.md), and the only code in the Worker that writes a part's
 * `state`. As lib/job-states/ does for jobs, each move is one SQL statement that locks what it
 * judges (the job's row first, then the part's), moves only under its condition, and reports what
 * it found. A move that ends the job or hands it to its join moves the job in the same statement:
 * to `queued` for the join when its last part is done, to `failed` when a part has spent its
 * attempts or interruptions, its webhook and its scratch in the outbox as any failure's.
 */
import { sql, type SQL } from "drizzle-orm";
import { jobParts, jobs, type JobStage, type JobStatus, type PartState } from "../../drizzle/schema";
import { isUuid } from "../../domain/ids";
import { MAX_INTERRUPTIONS } from "../../domain/jobs";
import { PART_ATTEMPTS, type PartAssignment, type SplitPlan } from "../../domain/split";
import type { Database } from "../services/db";
import { CLAIM_TAKEOVER_AFTER_MS, PARTS_SHARE, type Refusal as RefusalOf } from "./job-states";

/** What a refused move found: the job's status when it left `processing`, otherwise its part's state. */
export type Found = JobStatus | PartState;

/** A move that did not happen, in the shape a job's refusal has: `found` is null when there is no such job or part. */
export type Refusal = RefusalOf<Found>;

/** The state a refusal tells the encoder: a part done reads as `completed`, its job being still at work. */
export const refusalStatus = (found: Found) => (found === "done" ? "completed" : found);

const at = (date: Date) => sql`${date.toISOString()}::timestamptz`;

/** The job, locked before anything else in every statement here, so that a cancel and a part's move are ordered. */
const lockedJob = (jobId: string) => sql`job as (
  select id, status, stage, account_id, preset, input_url, split, dispatch, jsonb_array_length(split -> 'parts') as parts
  from ${jobs} where id = ${jobId} for no key update
)`;

/** One part, locked after its job. */
const lockedPart = (index: number) => sql`part as (
  select p.index, p.state, p.dispatch, p.lease, p.attempts, p.interruptions, p.heartbeat_at, p.message_id,
    p.output_key, p.error_message
  from ${jobParts} p join job on p.job_id = job.id where p.index = ${index} for no key update of p
)`;

/**
 * The parts run while their job is processing in its `cutting` or `parts` stage: a cancelled or
 * failed job's parts do nothing more, nor do those of a job taken back to `whole` (its splitting
 * encoder was interrupted, and the next attempt splits it afresh).
 */
const SPLIT_STAGES = sql`(${"cutting" satisfies JobStage}, ${"parts" satisfies JobStage})`;
const partsRunning = sql`job.status = ${"processing" satisfies JobStatus} and job.stage in ${SPLIT_STAGES}`;

/**
 * The job fails because of its part (`when`, over the locked `job` and `part`): `Part <i> of <n>:
 * <message>`, or `Audio: <message>` for the audio's task (docs/scaling.md), its webhook and its
 * scratch left to the outbox and the sweep in the same statement. Its quota unit is kept, as any
 * job's that fails after it was queued.
 */
const failJob = (when: SQL, message: string, now: Date) => sql`failed as (
  update ${jobs} set status = ${"failed" satisfies JobStatus},
    error_message = case when part.index < job.parts then 'Part ' || (part.index + 1) || ' of ' || job.parts || ': '
      else 'Audio: ' end || ${message}::text,
    last_checked_at = ${at(now)}, webhook_pending_since = ${at(now)}, scratch_pending_since = ${at(now)}
  from job, part
  where ${jobs}.id = job.id and ${partsRunning} and ${when}
  returning ${jobs}.id
)`;

/** The job a move failed, as the webhook's step needs it. */
export interface FailedJob {
  id: string;
  accountId: string;
  status: "failed";
}

interface FoundRow {
  status: JobStatus | null;
  state: PartState | null;
  account_id: string | null;
}

function refusal(row: FoundRow | undefined): Refusal {
  if (!row?.status) return { moved: false, found: null };
  if (row.status !== "processing") return { moved: false, found: row.status };
  return { moved: false, found: row.state };
}

const failedJob = (jobId: string, accountId: string): FailedJob => ({ id: jobId, accountId, status: "failed" });

async function rows<Row>(db: Database, statement: SQL): Promise<Row[]> {
  return (await db.execute<Record<string, unknown>>(statement)).rows as Row[];
}

// ── The split: the job's parts recorded ────────────────────────────────────────────────────

export type SplitOutcome = { moved: true; parts: number } | Refusal;

const CUTTING: JobStage = "cutting";

/** The job's row after a split call, locked; `recorded`: the tasks of the plan it holds. */
interface SplitRow {
  status: JobStatus;
  stage: JobStage;
  lease: number;
  recorded: number | null;
  inserted?: number;
}

const lockedForSplit = (jobId: string) => sql`job as (
  select id, status, stage, lease,
    jsonb_array_length(split -> 'parts') + case when (split ->> 'audio')::boolean then 1 else 0 end as recorded
  from ${jobs} where id = ${jobId} for no key update
)`;

/** The job is split under this claim, its pieces still being stored. */
const cuttingUnder = (claim: number) =>
  sql`job.status = ${"processing" satisfies JobStatus} and job.stage = ${CUTTING} and job.lease = ${claim}`;

/** The tasks' indices in `stored`, as a set SQL can test membership of. */
const indicesIn = (stored: readonly number[]) =>
  sql`(select value::int from jsonb_array_elements_text(${JSON.stringify(stored)}::jsonb))`;

/**
 * The job's encoder hands its plan over as soon as one task's input is stored, and tells again as
 * more are (`stored`: the indices of every task whose input is stored so far), so the first tasks
 * run while it stores the rest (docs/scaling.md#a-split-jobs-life).
 *
 * The first call, while the job is processing in its `whole` stage under this claim, records the
 * plan and puts a row per task, the audio's included (index `parts.length`, over every frame):
 * `queued` when its input is stored, `cutting` otherwise. A row an interrupted attempt left is
 * started afresh: a new dispatch and lease fence off whatever still works on it. The job is in
 * `cutting` until no row is, then in `parts`, at its next dispatch: only then is the message it
 * came by spent, so until then that message delivered again takes over a quiet splitting encoder,
 * as for any job. Each later call moves the rows it names to `queued`, and is the splitting
 * encoder's sign of life. A call sent again (its answer lost) is answered as the first was.
 */
export async function recordSplit(
  db: Database,
  jobId: string,
  claim: number,
  plan: SplitPlan,
  stored: readonly number[],
  now = new Date(),
): Promise<SplitOutcome> {
  if (!isUuid(jobId)) return { moved: false, found: null };
  const isStored = new Set(stored);
  const tasks = [
    ...plan.parts.map(({ index, firstFrame, frameCount }) => ({ index, firstFrame, frameCount })),
    ...(plan.audio ? [{ index: plan.parts.length, firstFrame: 0, frameCount: plan.totalFrames }] : []),
  ].map((task) => ({ ...task, state: isStored.has(task.index) ? "queued" : CUTTING }));
  const allStored = tasks.every((task) => task.state === "queued");
  const [first] = await rows<SplitRow>(
    db,
    sql`with ${lockedForSplit(jobId)},
    moved as (
      update ${jobs} set stage = ${allStored ? "parts" : CUTTING}, split = ${JSON.stringify(plan)}::jsonb,
        dispatch = ${jobs}.dispatch + ${allStored ? 1 : 0}, last_checked_at = ${at(now)}
      from job
      where ${jobs}.id = job.id and job.status = ${"processing" satisfies JobStatus}
        and job.stage = ${"whole" satisfies JobStage} and job.lease = ${claim}
      returning ${jobs}.id
    ),
    dropped as (
      delete from ${jobParts} where job_id in (select id from moved) and index >= ${tasks.length}
    ),
    inserted as (
      insert into ${jobParts} (job_id, index, first_frame, frame_count, state, heartbeat_at)
      select moved.id, p.index, p."firstFrame", p."frameCount", p.state, ${at(now)}
      from moved cross join jsonb_to_recordset(${JSON.stringify(tasks)}::jsonb)
        as p(index int, "firstFrame" int, "frameCount" int, state text)
      on conflict (job_id, index) do update set first_frame = excluded.first_frame,
        frame_count = excluded.frame_count, state = excluded.state, attempts = 0, interruptions = 0,
        dispatch = ${jobParts}.dispatch + 1, lease = ${jobParts}.lease + 1, progress = 0,
        heartbeat_at = excluded.heartbeat_at, message_id = null, output_key = null, error_message = null,
        completed_at = null
      returning index
    )
    select job.status, job.stage, job.lease, job.recorded, (select count(*) from inserted)::int as inserted from job`,
  );
  if (!first) return { moved: false, found: null };
  if (first.inserted) return { moved: true, parts: first.inserted };
  if (first.stage === CUTTING) {
    const [later] = await rows<SplitRow>(
      db,
      sql`with ${lockedForSplit(jobId)},
      cutting as (
        select p.index from ${jobParts} p join job on p.job_id = job.id
        where p.state = ${CUTTING} for no key update of p
      ),
      queued as (
        update ${jobParts} set state = ${"queued" satisfies PartState}, heartbeat_at = ${at(now)}
        from job, cutting
        where ${jobParts}.job_id = job.id and ${jobParts}.index = cutting.index and ${cuttingUnder(claim)}
          and cutting.index in ${indicesIn(stored)}
        returning ${jobParts}.index
      ),
      still as (select exists (select 1 from cutting where cutting.index not in ${indicesIn(stored)}) as cutting),
      moved as (
        update ${jobs} set last_checked_at = ${at(now)},
          stage = case when still.cutting then ${CUTTING} else ${"parts" satisfies JobStage} end,
          dispatch = ${jobs}.dispatch + case when still.cutting then 0 else 1 end
        from job, still where ${jobs}.id = job.id and ${cuttingUnder(claim)}
        returning ${jobs}.id
      )
      select job.status, job.stage, job.lease, job.recorded from job`,
    );
    return splitAnswer(later, claim);
  }
  return splitAnswer(first, claim);
}

/** A call that found the job split under its claim already is answered as the first was. */
function splitAnswer(row: SplitRow | undefined, claim: number): SplitOutcome {
  if (!row) return { moved: false, found: null };
  const split = row.stage === CUTTING || row.stage === "parts";
  if (row.status === "processing" && split && row.lease === claim && row.recorded !== null)
    return { moved: true, parts: row.recorded };
  return { moved: false, found: row.status };
}

/** A part's current dispatch. */
export interface PartDispatch {
  index: number;
  dispatch: number;
}

/**
 * The job's queued parts whose message is not recorded: just split, requeued, or their publish
 * failed. The longest first, so it is published first: the audio's task, over every frame, takes
 * longer than a part once a source runs past a few minutes, and begun last it would end the parts'
 * stage alone (docs/scaling.md#the-audio). A stream's parts follow it in timeline order instead:
 * its start plays first (docs/playback.md#how-a-stream-is-made).
 */
export async function undispatchedParts(db: Database, jobId: string): Promise<PartDispatch[]> {
  return rows<PartDispatch>(
    db,
    sql`select p.index, p.dispatch from ${jobParts} p join ${jobs} j on j.id = p.job_id
      where p.job_id = ${jobId} and p.state = ${"queued" satisfies PartState} and p.message_id is null
      order by case when j.split -> 'stream' is not null
        then case when p.index = jsonb_array_length(j.split -> 'parts') then -1 else p.index end
        else -p.frame_count end, p.index`,
  );
}

/**
 * Records the messages that carry the parts' dispatches, so a cancel can delete them. A part
 * dispatched again meanwhile keeps its newer record. Not a change of state.
 */
export async function recordPartMessages(
  db: Database,
  jobId: string,
  messages: (PartDispatch & { messageId: string })[],
): Promise<void> {
  if (messages.length === 0) return;
  await db.execute(sql`update ${jobParts} set message_id = m."messageId"
    from jsonb_to_recordset(${JSON.stringify(messages)}::jsonb) as m(index int, dispatch int, "messageId" text)
    where job_id = ${jobId} and ${jobParts}.index = m.index and ${jobParts}.dispatch = m.dispatch`);
}

/** The messages still held for the job's parts that are not done: a job that ends deletes them. */
export async function partMessages(db: Database, jobId: string): Promise<string[]> {
  const found = await rows<{ message_id: string }>(
    db,
    sql`select message_id from ${jobParts}
      where job_id = ${jobId} and state <> ${"done" satisfies PartState} and message_id is not null`,
  );
  return found.map((r) => r.message_id);
}

/** The parts' outputs, for the join (every part is done when it runs). */
export async function partOutputs(db: Database, jobId: string): Promise<{ index: number; outputKey: string }[]> {
  const found = await rows<{ index: number; output_key: string }>(
    db,
    sql`select index, output_key from ${jobParts} where job_id = ${jobId} and output_key is not null order by index`,
  );
  return found.map((r) => ({ index: r.index, outputKey: r.output_key }));
}

// ── The part's encoder: claim, heartbeat, reports ───────────────────────────────────────────

/** Why a part whose interruptions are spent failed its job. */
export const PART_INTERRUPTED_MESSAGE =
  `it was interrupted ${MAX_INTERRUPTIONS + 1} times: the encoder working on it stopped before it could report ` +
  "(its piece of the source may be crashing it), or could not be reached.";

export type PartClaim =
  | ({ moved: true } & PartAssignment)
  /** The part's interruptions were spent: the job failed instead. */
  | { moved: false; failed: FailedJob }
  | Refusal;

/**
 * A delivery of the part's current message claims it: a queued part, or one whose claim went
 * quiet (CLAIM_TAKEOVER_AFTER_MS), which counts an interruption of the part; once those are
 * spent, the claim fails the job instead.
 */
export async function claimPart(
  db: Database,
  jobId: string,
  index: number,
  dispatch: number,
  now = new Date(),
): Promise<PartClaim> {
  if (!isUuid(jobId)) return { moved: false, found: null };
  const takeoverBefore = at(new Date(now.getTime() - CLAIM_TAKEOVER_AFTER_MS));
  const quiet = sql`part.state = ${"processing" satisfies PartState} and part.heartbeat_at < ${takeoverBefore}`;
  const current = sql`part.dispatch = ${dispatch}`;
  const [row] = await rows<
    FoundRow & {
      preset: string;
      input_url: string;
      split: SplitPlan;
      lease: number | null;
      attempts: number | null;
      failed: string | null;
    }
  >(
    db,
    sql`with ${lockedJob(jobId)}, ${lockedPart(index)},
    claimed as (
      update ${jobParts} set state = ${"processing" satisfies PartState}, lease = ${jobParts}.lease + 1, progress = 0,
        heartbeat_at = ${at(now)},
        interruptions = ${jobParts}.interruptions + case when part.state = ${"processing" satisfies PartState} then 1 else 0 end
      from job, part
      where ${jobParts}.job_id = job.id and ${jobParts}.index = part.index and ${partsRunning} and ${current}
        and (part.state = ${"queued" satisfies PartState} or (${quiet} and part.interruptions < ${MAX_INTERRUPTIONS}))
      returning ${jobParts}.lease, ${jobParts}.attempts
    ),
    ${failJob(sql`${current} and ${quiet} and part.interruptions >= ${MAX_INTERRUPTIONS}`, PART_INTERRUPTED_MESSAGE, now)}
    select job.status, job.account_id, job.preset, job.input_url, job.split, part.state, claimed.lease, claimed.attempts, failed.id as failed
    from job left join part on true left join claimed on true left join failed on true`,
  );
  if (row?.failed && row.account_id) return { moved: false, failed: failedJob(jobId, row.account_id) };
  if (!row || row.lease === null || row.attempts === null || !row.account_id) return refusal(row);
  return {
    moved: true,
    claim: row.lease,
    attempt: row.attempts,
    accountId: row.account_id,
    preset: row.preset,
    inputUrl: row.input_url,
    plan: row.split,
    part: row.split.parts[index] ?? null,
  };
}

export type PartMove = { moved: true } | Refusal;

/**
 * How much the audio's task weighs in its job's progress against the video's frames: it encodes
 * every second of the source, but costs about a twentieth of the parts' encodes (1.5 s against 46 s
 * for a 120 s 1080p source to 720p; about 5 s over a pure tone, AAC's worst case).
 */
export const AUDIO_TASK_WEIGHT = 0.05;

/**
 * A beat of the part's latest claim, while its job's parts run. The job's progress is its tasks'
 * over their share of it, each task weighed by its frames (parts end on source keyframes, so they
 * differ in length) and the audio's by AUDIO_TASK_WEIGHT; a task done counts whole. Its
 * lastCheckedAt is the latest beat.
 */
export async function beatPart(
  db: Database,
  jobId: string,
  index: number,
  claim: number,
  progress: number | undefined,
  now = new Date(),
): Promise<PartMove> {
  if (!isUuid(jobId)) return { moved: false, found: null };
  const [row] = await rows<FoundRow & { beat: boolean | null }>(
    db,
    sql`with ${lockedJob(jobId)}, ${lockedPart(index)},
    beat as (
      update ${jobParts} set heartbeat_at = ${at(now)}, progress = coalesce(${progress ?? null}::real, ${jobParts}.progress)
      from job, part
      where ${jobParts}.job_id = job.id and ${jobParts}.index = part.index and ${partsRunning}
        and part.state = ${"processing" satisfies PartState} and part.lease = ${claim}
      returning ${jobParts}.progress
    ),
    aggregated as (
      -- While its pieces are stored, the job's sign of life is its splitting encoder's, not its parts'.
      update ${jobs} set last_checked_at = case when ${jobs}.stage = ${"cutting" satisfies JobStage}
          then ${jobs}.last_checked_at else ${at(now)} end,
        progress = ${PARTS_SHARE} * (
          select sum(w.weight * w.progress) / sum(w.weight) from (
            select case when p.index < job.parts then p.frame_count else p.frame_count * ${AUDIO_TASK_WEIGHT}::real end as weight,
              case when p.index = ${index} then beat.progress when p.state = ${"done" satisfies PartState} then 1
                else p.progress end as progress
            from ${jobParts} p, job where p.job_id = job.id
          ) w
        )
      from beat where ${jobs}.id = ${jobId}
      returning ${jobs}.id
    )
    select job.status, job.account_id, part.state, (select count(*) > 0 from aggregated) as beat
    from job left join part on true`,
  );
  return row?.beat ? { moved: true } : refusal(row);
}

export type PartCompletion =
  /** `joinDispatch`: this report completed the job's last part, and the join is the job's next dispatch. */
  { moved: true; joinDispatch: number | null } | Refusal;

/**
 * The part's latest claim reports its output: the part is done. The statement that makes the
 * last part done also moves the job to its join (stage `join`, queued for its next dispatch): the
 * job's parts are locked, each as it is now, so of reports racing to complete the last parts
 * exactly one finds no other part left. The same report sent again is answered as the first was.
 */
export async function completePart(
  db: Database,
  jobId: string,
  index: number,
  claim: number,
  outputKey: string,
  now = new Date(),
): Promise<PartCompletion> {
  if (!isUuid(jobId)) return { moved: false, found: null };
  const [row] = await rows<
    FoundRow & { lease: number | null; output_key: string | null; done: boolean; join_dispatch: number | null }
  >(
    db,
    sql`with ${lockedJob(jobId)},
    parts as (
      select p.index, p.state, p.lease, p.output_key from ${jobParts} p join job on p.job_id = job.id
      order by p.index for no key update of p
    ),
    part as (select * from parts where index = ${index}),
    done as (
      update ${jobParts} set state = ${"done" satisfies PartState}, output_key = ${outputKey}, progress = 1,
        heartbeat_at = ${at(now)}, completed_at = ${at(now)}, message_id = null
      from job, part
      where ${jobParts}.job_id = job.id and ${jobParts}.index = part.index and ${partsRunning}
        and part.state = ${"processing" satisfies PartState} and part.lease = ${claim}
      returning ${jobParts}.index
    ),
    joined as (
      update ${jobs} set status = ${"queued" satisfies JobStatus}, stage = ${"join" satisfies JobStage},
        dispatch = ${jobs}.dispatch + 1, message_id = null, progress = ${PARTS_SHARE}, last_checked_at = ${at(now)}
      from done
      where ${jobs}.id = ${jobId}
        and not exists (select 1 from parts where parts.index <> done.index and parts.state <> ${"done" satisfies PartState})
      returning ${jobs}.dispatch
    )
    select job.status, job.account_id, part.state, part.lease, part.output_key,
      (select count(*) > 0 from done) as done, (select dispatch from joined) as join_dispatch
    from job left join part on true`,
  );
  if (row?.done) return { moved: true, joinDispatch: row.join_dispatch };
  if (row?.state === "done" && row.lease === claim && row.output_key === outputKey)
    return { moved: true, joinDispatch: null };
  return refusal(row);
}

export type PartFailure =
  /** The part is tried again: queued for its next dispatch (null: by this report sent before, which dispatched it). */
  | { moved: true; requeued: PartDispatch | null }
  /** The part's attempts are spent (or no attempt can fix it): the job failed, `failed` when this report failed it. */
  | { moved: true; failed: FailedJob | null }
  | Refusal;

/**
 * The part's latest claim reports a failure: one of the part's attempts (PART_ATTEMPTS). While
 * attempts remain and another may help, the part is queued again for its next dispatch;
 * otherwise the job fails, `Part <i> of <n>: <message>`. The same report sent again is answered
 * as the first was.
 */
export async function failPart(
  db: Database,
  jobId: string,
  index: number,
  claim: number,
  failure: { errorMessage: string; retryable: boolean },
  now = new Date(),
): Promise<PartFailure> {
  if (!isUuid(jobId)) return { moved: false, found: null };
  const { errorMessage, retryable } = failure;
  const latest = sql`part.state = ${"processing" satisfies PartState} and part.lease = ${claim}`;
  const attemptsLeft = sql`${retryable}::boolean and part.attempts + 1 < ${PART_ATTEMPTS}`;
  const [row] = await rows<
    FoundRow & {
      lease: number | null;
      error_message: string | null;
      requeued: number | null;
      counted: boolean;
      failed: string | null;
    }
  >(
    db,
    sql`with ${lockedJob(jobId)}, ${lockedPart(index)},
    counted as (
      update ${jobParts} set attempts = ${jobParts}.attempts + 1, error_message = ${errorMessage}, heartbeat_at = ${at(now)},
        state = case when ${attemptsLeft} then ${"queued" satisfies PartState} else ${jobParts}.state end,
        dispatch = ${jobParts}.dispatch + case when ${attemptsLeft} then 1 else 0 end,
        message_id = case when ${attemptsLeft} then null else ${jobParts}.message_id end,
        progress = case when ${attemptsLeft} then 0 else ${jobParts}.progress end
      from job, part
      where ${jobParts}.job_id = job.id and ${jobParts}.index = part.index and ${partsRunning} and ${latest}
      returning ${jobParts}.state, ${jobParts}.dispatch
    ),
    ${failJob(sql`${latest} and not (${attemptsLeft})`, errorMessage, now)}
    select job.status, job.account_id, part.state, part.lease, part.error_message,
      (select dispatch from counted where state = ${"queued" satisfies PartState}) as requeued,
      (select count(*) > 0 from counted) as counted, failed.id as failed
    from job left join part on true left join failed on true`,
  );
  if (row?.failed && row.account_id) return { moved: true, failed: failedJob(jobId, row.account_id) };
  if (row?.requeued !== null && row?.requeued !== undefined)
    return { moved: true, requeued: { index, dispatch: row.requeued } };
  // Sent again: the part this claim failed is queued again, or its job failed, under the same message.
  if (row && !row.counted && row.lease === claim && row.error_message === errorMessage) {
    if (row.status === "failed") return { moved: true, failed: null };
    if (row.status === "processing" && row.state === "queued") return { moved: true, requeued: null };
  }
  return refusal(row);
}

// ── Interruptions: the sweep and lost messages ──────────────────────────────────────────────

export type PartInterruption = { moved: true; requeued: PartDispatch } | { moved: true; failed: FailedJob } | Refusal;

/**
 * The part's attempt ended without a report (`when`, over the locked `part`: its heartbeat went
 * stale, its message was lost): an interruption of the part, which goes back to the queue for
 * its next dispatch, a new lease fencing off its quiet encoder; once its interruptions are spent,
 * the job fails.
 */
async function interruptPart(
  db: Database,
  jobId: string,
  index: number,
  when: SQL,
  now: Date,
): Promise<PartInterruption> {
  if (!isUuid(jobId)) return { moved: false, found: null };
  const [row] = await rows<FoundRow & { requeued: number | null; failed: string | null }>(
    db,
    sql`with ${lockedJob(jobId)}, ${lockedPart(index)},
    requeued as (
      update ${jobParts} set state = ${"queued" satisfies PartState}, interruptions = ${jobParts}.interruptions + 1,
        dispatch = ${jobParts}.dispatch + 1, lease = ${jobParts}.lease + 1, message_id = null, progress = 0,
        heartbeat_at = ${at(now)}
      from job, part
      where ${jobParts}.job_id = job.id and ${jobParts}.index = part.index and ${partsRunning} and ${when}
        and part.interruptions < ${MAX_INTERRUPTIONS}
      returning ${jobParts}.dispatch
    ),
    ${failJob(sql`${when} and part.interruptions >= ${MAX_INTERRUPTIONS}`, PART_INTERRUPTED_MESSAGE, now)}
    select job.status, job.account_id, part.state, requeued.dispatch as requeued, failed.id as failed
    from job left join part on true left join requeued on true left join failed on true`,
  );
  if (row?.failed && row.account_id) return { moved: true, failed: failedJob(jobId, row.account_id) };
  if (row?.requeued !== null && row?.requeued !== undefined)
    return { moved: true, requeued: { index, dispatch: row.requeued } };
  return refusal(row);
}

/** The sweep: a processing part with no beat since `cutoff` (one that came back to life is left alone). */
export function interruptStalePart(db: Database, jobId: string, index: number, cutoff: Date, now = new Date()) {
  const stale = sql`part.state = ${"processing" satisfies PartState} and part.heartbeat_at < ${at(cutoff)}`;
  return interruptPart(db, jobId, index, stale, now);
}

/**
 * QStash gave up on the part's message (its failure callback, lib/lost-messages.ts): only a part
 * still queued on that very message moves, so a callback delivered twice moves it once.
 */
export function interruptLostPart(db: Database, jobId: string, index: number, messageId: string, now = new Date()) {
  const waiting = sql`part.state = ${"queued" satisfies PartState} and part.message_id = ${messageId}`;
  return interruptPart(db, jobId, index, waiting, now);
}

/** The parts whose encoders went quiet before `cutoff`, of jobs whose parts still run. */
export async function staleParts(
  db: Database,
  cutoff: Date,
  limit: number,
): Promise<{ jobId: string; index: number }[]> {
  const found = await rows<{ job_id: string; index: number }>(
    db,
    sql`select p.job_id, p.index from ${jobParts} p join ${jobs} j on j.id = p.job_id
      where p.state = ${"processing" satisfies PartState} and p.heartbeat_at < ${at(cutoff)}
        and j.status = ${"processing" satisfies JobStatus} and j.stage in ${SPLIT_STAGES}
      order by p.heartbeat_at limit ${limit}`,
  );
  return found.map((r) => ({ jobId: r.job_id, index: r.index }));
}

/** The queued parts, of jobs whose parts still run, left without a message since before `cutoff`. */
export async function partsLeftUndispatched(
  db: Database,
  cutoff: Date,
  limit: number,
): Promise<(PartDispatch & { jobId: string })[]> {
  const found = await rows<{ job_id: string; index: number; dispatch: number }>(
    db,
    sql`select p.job_id, p.index, p.dispatch from ${jobParts} p join ${jobs} j on j.id = p.job_id
      where p.state = ${"queued" satisfies PartState} and p.message_id is null and p.heartbeat_at < ${at(cutoff)}
        and j.status = ${"processing" satisfies JobStatus} and j.stage in ${SPLIT_STAGES}
      order by p.heartbeat_at limit ${limit}`,
  );
  return found.map((r) => ({ jobId: r.job_id, index: r.index, dispatch: r.dispatch }));
}

/** The queued parts, of jobs whose parts still run, waiting on a message since before `cutoff`, the longest waiting first. */
export async function partsLongWaiting(
  db: Database,
  cutoff: Date,
  limit: number,
): Promise<{ jobId: string; index: number; messageId: string }[]> {
  const found = await rows<{ job_id: string; index: number; message_id: string }>(
    db,
    sql`select p.job_id, p.index, p.message_id from ${jobParts} p join ${jobs} j on j.id = p.job_id
      where p.state = ${"queued" satisfies PartState} and p.message_id is not null and p.heartbeat_at < ${at(cutoff)}
        and j.status = ${"processing" satisfies JobStatus} and j.stage in ${SPLIT_STAGES}
      order by p.heartbeat_at limit ${limit}`,
  );
  return found.map((r) => ({ jobId: r.job_id, index: r.index, messageId: r.message_id }));
}
