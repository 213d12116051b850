import { and, eq, gt, sql } from "drizzle-orm";
import { usage } from "../../drizzle/schema";
import { PLAN_DISPLAY_NAMES, type PlanId } from "../../domain/plans";
import type { Database } from "../services/db";
import { ApiError } from "../errors";

type Executor = Pick<Database, "execute" | "update" | "select">;

/**
 * Takes one unit of this month's quota in a single statement: the row lock taken by
 * ON CONFLICT serialises concurrent claims, so N creations against k remaining units give
 * exactly k successes. Returns the units used after the claim.
 */
export async function claimQuotaUnit(
  db: Executor,
  accountId: string,
  period: string,
  limit: number,
  plan: PlanId,
): Promise<number> {
  if (limit > 0) {
    const result = await db.execute<{ count: number }>(sql`
      insert into usage (account_id, period, count) values (${accountId}, ${period}, 1)
      on conflict (account_id, period) do update set count = usage.count + 1
      where usage.count < ${limit}
      returning count`);
    if (result.rows.length === 1) return Number(result.rows[0].count);
  }
  const [row] = await db
    .select({ count: usage.count })
    .from(usage)
    .where(and(eq(usage.accountId, accountId), eq(usage.period, period)));
  const current = row?.count ?? 0;
  throw new ApiError(429, {
    error: "Usage limit exceeded",
    message: `You have used all ${limit} jobs of your ${PLAN_DISPLAY_NAMES[plan]} plan this month. The quota resets at the start of the next calendar month (UTC), or when the plan changes.`,
    usage: { current, limit, plan: PLAN_DISPLAY_NAMES[plan] },
  });
}

/** Returns a unit taken for a job that never reached the queue. */
export async function releaseQuotaUnit(db: Executor, accountId: string, period: string): Promise<void> {
  await db
    .update(usage)
    .set({ count: sql`${usage.count} - 1` })
    .where(and(eq(usage.accountId, accountId), eq(usage.period, period), gt(usage.count, 0)));
}
