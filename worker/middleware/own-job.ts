import { and, eq, sql } from "drizzle-orm";
import { accounts, apiKeys, jobs } from "../../drizzle/schema";
import { isUuid } from "../../domain/ids";
import { activeKey, callerColumns } from "../lib/callers";
import { presentedColumns } from "../lib/job-columns";
import { preparedPerDatabase } from "../services/db";
import { requireCallerIn } from "./auth";

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
 * in the query that reads the job. Sets `ownJob` as findOwnJob (lib/find-job.ts) answers.
 */
export const requireCallerWithOwnJob = requireCallerIn(async (c, keyHash) => {
  const id = c.req.param("id") ?? "";
  const [row] = await callerAndOwnJob(c.get("services").db).execute({ hash: keyHash, id: isUuid(id) ? id : null });
  if (!row) return undefined;
  c.set("ownJob", row.job ?? undefined);
  return row.caller;
});
