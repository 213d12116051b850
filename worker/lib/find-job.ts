import { and, eq, sql } from "drizzle-orm";
import { accounts, apiKeys, jobs, type Job } from "../../drizzle/schema";
import { isUuid } from "../../domain/ids";
import { requireCallerIn } from "../middleware/auth";
import { preparedPerDatabase, type Database } from "../services/db";
import { activeKey, callerColumns } from "./callers";
import { presentedColumns } from "./job-columns";

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

/** The key's caller and, when the id names one of the caller's jobs, that job: one row, or none for a key that does not authenticate. */
const callerAndOwnJob = preparedPerDatabase((db) =>
  db
    .select({ caller: callerColumns, job: presentedColumns })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .leftJoin(jobs, and(eq(jobs.id, sql.placeholder("id")), eq(jobs.accountId, accounts.id)))
    .where(activeKey(sql.placeholder("hash")))
    .limit(1)
    .prepare("caller_and_own_job"),
);

/**
 * The routes about one job of the caller's (GET /jobs/{id}, its download-url): the key is checked
 * in the query that reads the job. Sets `ownJob` as findOwnJob answers.
 */
export const requireCallerWithOwnJob = requireCallerIn(async (c, keyHash) => {
  const id = c.req.param("id") ?? "";
  const [row] = await callerAndOwnJob(c.get("services").db).execute({ hash: keyHash, id: isUuid(id) ? id : null });
  if (!row) return undefined;
  c.set("ownJob", row.job ?? undefined);
  return row.caller;
});
