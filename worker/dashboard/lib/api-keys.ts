import { and, desc, eq, isNull, type SQL } from "drizzle-orm";
import { apiKeys } from "../../../drizzle/schema";
import { generateApiKey, hashApiKey, type KeyPrefix } from "../../../domain/keys";
import { markKeysChanged, type KeyCache } from "../../lib/key-cache";
import type { AnyDatabase } from "../../services/db";

export const KEY_NAME_MAX_LENGTH = 80;

/** A new key for the account. The full key exists only in the return value; the database keeps its hash. */
export async function issueApiKey(
  db: AnyDatabase,
  accountId: string,
  opts: { name?: string | null; prefix?: KeyPrefix } = {},
) {
  const apiKey = generateApiKey(opts.prefix);
  const [row] = await db
    .insert(apiKeys)
    .values({ accountId, hash: await hashApiKey(apiKey), last4: apiKey.slice(-4), name: opts.name ?? null })
    .returning({ id: apiKeys.id });
  return { keyId: row.id, apiKey };
}

/**
 * Revokes the active key `match` selects and marks its cached lookup changed, so the API refuses
 * it on the next request rather than up to a cache lifetime later. Null when no active key matched.
 */
export async function revokeApiKey(db: AnyDatabase, cache: KeyCache | null, match: SQL, ...alsoMatch: SQL[]) {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(match, ...alsoMatch, isNull(apiKeys.revokedAt)))
    .returning({ keyId: apiKeys.id, hash: apiKeys.hash, last4: apiKeys.last4 });
  if (!row) return null;
  if (cache) await markKeysChanged(cache, [row.hash]);
  return { keyId: row.keyId, last4: row.last4 };
}

/**
 * Marks every cached key lookup of the account changed: each holds the account's plan and
 * webhook URL, so a change to either must not wait out the cache lifetime.
 */
export async function forgetCachedKeys(db: AnyDatabase, cache: KeyCache | null, accountId: string) {
  if (!cache) return;
  const rows = await db.select({ hash: apiKeys.hash }).from(apiKeys).where(eq(apiKeys.accountId, accountId));
  await markKeysChanged(
    cache,
    rows.map((r) => r.hash),
  );
}

/** The account's keys, newest first, as they may be shown: never the hash, only the last four. */
export function listApiKeys(db: AnyDatabase, accountId: string) {
  return db
    .select({
      id: apiKeys.id,
      name: apiKeys.name,
      last4: apiKeys.last4,
      createdAt: apiKeys.createdAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .where(eq(apiKeys.accountId, accountId))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
}

export type ListedKey = Awaited<ReturnType<typeof listApiKeys>>[number];
