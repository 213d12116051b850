/**
 * What a caller is made of, and the one rule for a key that authenticates: known and not
 * revoked. The key lookup (middleware/auth.ts) and every query that checks the key itself (a
 * job's read, a page of jobs, a creation) select and filter with these.
 */
import { and, eq, isNull, type SQLWrapper } from "drizzle-orm";
import { accounts, apiKeys } from "../../drizzle/schema";

export const callerColumns = {
  keyId: apiKeys.id,
  accountId: accounts.id,
  plan: accounts.plan,
  webhookUrl: accounts.webhookUrl,
};
export const activeKey = (hash: SQLWrapper) => and(eq(apiKeys.hash, hash), isNull(apiKeys.revokedAt));
