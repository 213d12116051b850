/**
 * The one statement every transition is: one round trip over Neon's HTTP path that locks the
 * job's row, moves it only from the states the table allows (and under the transition's own
 * condition, such as a stale heartbeat), and reports the state it found. So two transitions
 * racing for one job (a cancel and a completion) cannot both win, and a refusal says why without
 * a second query. A split job's parts have their own statements (lib/part-states.ts), which move
 * the job too, in the same statement as its part: to `queued` for its join when its last part is
 * done (as for a retry), to `failed` when a part has spent its attempts or interruptions.
 */
import { and, eq, getTableColumns, gt, inArray, sql, type SQL } from "drizzle-orm";
import type { PgUpdateSetSource } from "drizzle-orm/pg-core";
import { jobs, usage } from "../../../drizzle/schema";
import { isUuid } from "../../../domain/ids";
import { FINAL_STATUSES, type JobStatus } from "../../../domain/jobs";
import type { Database } from "../../services/db";
import { TRANSITIONS, type TransitionName, type TransitionOutcome } from "./table";

/** What a transition writes besides the status, which the table decides. */
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
export async function move(
  db: Database,
  name: TransitionName,
  target: { id: string; accountId?: string },
  changes: Changes,
  options: MoveOptions = {},
): Promise<TransitionOutcome> {
  if (!isUuid(target.id)) return { moved: false, found: null };
  const { from, to } = TRANSITIONS[name];
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
  // A job that ends leaves its scratch to delete, marked in the same statement (lib/split-jobs.ts):
  // a split job's; an interrupted one's, whose encoder may have stored pieces before it died that
  // no split recorded; one that fails or is cancelled while an encoder holds it, which may be
  // storing pieces its split has not yet recorded; and the stream of one that ends without completing.
  const unfinished =
    to === "completed" ? sql`` : sql` and ${jobs.stream} is null and ${before.previous} <> 'processing'`;
  const scratch: Changes = FINAL_STATUSES.includes(to)
    ? {
        scratchPendingSince: sql`case when ${jobs.split} is null and ${jobs.interruptions} = 0${unfinished} then null else ${new Date().toISOString()}::timestamptz end`,
      }
    : {};
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
  if (!row) return { moved: false, found: null };
  return row.job ? { moved: true, previous: row.previous, job: row.job } : { moved: false, found: row.previous };
}
