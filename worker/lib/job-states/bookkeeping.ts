/**
 * The jobs table's writes that are not a change of state: the queue message that carries a job,
 * and the outbox marks of its webhook and its scratch taken off once they are settled.
 */
import { and, eq, isNotNull, lte, sql } from "drizzle-orm";
import { jobs } from "../../../drizzle/schema";
import { preparedPerDatabase, type Database } from "../../services/db";

const messageRecord = preparedPerDatabase((db) =>
  db
    .update(jobs)
    .set({ messageId: sql`${sql.placeholder("messageId")}` })
    .where(eq(jobs.id, sql.placeholder("jobId")))
    .prepare("record_message"),
);

/** Records the queue message that carries the job, so a cancel can delete it. */
export async function recordMessage(db: Database, jobId: string, messageId: string): Promise<void> {
  await messageRecord(db).execute({ jobId, messageId });
}

/** Takes a finished job's webhook out of the outbox: QStash has it, or there was none to send. */
export async function webhookSettled(db: Database, jobId: string): Promise<void> {
  await db
    .update(jobs)
    .set({ webhookPendingSince: null })
    .where(and(eq(jobs.id, jobId), isNotNull(jobs.webhookPendingSince)));
}

/**
 * Takes a split job's scratch off the pending list once it is deleted (lib/split-jobs.ts), unless
 * the job's end marked it again after `deletedFrom`, when the deletion began.
 */
export async function scratchSettled(db: Database, jobId: string, deletedFrom: Date): Promise<void> {
  await db
    .update(jobs)
    .set({ scratchPendingSince: null })
    .where(and(eq(jobs.id, jobId), lte(jobs.scratchPendingSince, deletedFrom)));
}
