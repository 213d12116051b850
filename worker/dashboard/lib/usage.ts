import type { PlanId } from "../../../domain/plans";
import { quotaPeriod } from "../../../domain/time";
import { monthlyQuota, type Env } from "../../env";
import { unitsUsed } from "../../lib/quota";
import type { AnyDatabase } from "../../services/db";

/** Jobs counted against this month's quota, the plan's limit, and when the count starts again. */
export async function usageThisMonth(
  db: AnyDatabase,
  env: Pick<Env, "QUOTA_LIMITS">,
  accountId: string,
  plan: PlanId,
  now = new Date(),
) {
  const [row] = await unitsUsed(db, { accountId, period: quotaPeriod(now) });
  return {
    used: row?.count ?? 0,
    limit: monthlyQuota(env, plan),
    resetsAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)),
  };
}
