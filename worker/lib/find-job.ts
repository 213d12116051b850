import { and, eq, sql } from "drizzle-orm";
import { jobs, type Job } from "../../drizzle/schema";
import { isUuid } from "../../domain/ids";
import { preparedPerDatabase, type Database } from "../services/db";

const ownJob = preparedPerDatabase((db) =>
  db
    .select()
    .from(jobs)
    .where(and(eq(jobs.id, sql.placeholder("id")), eq(jobs.accountId, sql.placeholder("accountId"))))
    .limit(1)
    .prepare("own_job"),
);

/** The caller's job, or undefined for an unknown id, a malformed id, or another account's job. */
export async function findOwnJob(db: Database, accountId: string, id: string): Promise<Job | undefined> {
  if (!isUuid(id)) return undefined;
  const [job] = await ownJob(db).execute({ id, accountId });
  return job;
}
