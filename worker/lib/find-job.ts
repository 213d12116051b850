import { and, eq } from "drizzle-orm";
import { jobs, type Job } from "../../drizzle/schema";
import { isUuid } from "../../domain/ids";
import type { Database } from "../services/db";

/** The caller's job, or undefined for an unknown id, a malformed id, or another account's job. */
export async function findOwnJob(db: Database, accountId: string, id: string): Promise<Job | undefined> {
  if (!isUuid(id)) return undefined;
  const [job] = await db
    .select()
    .from(jobs)
    .where(and(eq(jobs.id, id), eq(jobs.accountId, accountId)))
    .limit(1);
  return job;
}
