import { and, eq, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { usage } from "../../drizzle/schema";
import type { AnyDatabase } from "../services/db";

export interface QuotaClaim {
  /** The account, or an expression of the enclosing statement that gives it (null: claim nothing). */
  accountId: string | SQL;
  /** The calendar month ("YYYY-MM", UTC) the unit counts against, or the placeholder for it. */
  period: string | SQLWrapper;
  /** The month's units, or an expression of the enclosing statement that gives them. */
  limit: number | SQL;
}

/**
 * Takes one unit of the month's quota, as a statement to run inside a larger one (a WITH
 * clause): `insert … on conflict do update … where count < limit`. The row lock ON CONFLICT
 * takes serialises concurrent claims, so N creations against k remaining units give exactly k
 * successes. It returns the units used after the claim, or no row when the quota is used up (a
 * limit of 0 never inserts a first row either).
 */
export function claimUnit({ accountId, period, limit }: QuotaClaim): SQL {
  return sql`
    insert into ${usage} (account_id, period, count)
    select ${accountId}::uuid, ${period}, 1 where ${limit}::int > 0
    on conflict (account_id, period) do update set count = ${usage}.count + 1 where ${usage}.count < ${limit}::int
    returning count`;
}

/** The units used this month (a refused creation's `usage.current`, the dashboard's meter). */
export function unitsUsed<D extends AnyDatabase>(db: D, { accountId, period }: { accountId: string; period: string }) {
  return db
    .select({ count: usage.count })
    .from(usage)
    .where(and(eq(usage.accountId, accountId), eq(usage.period, period)));
}
