import { Redis } from "@upstash/redis";
import { and, eq, isNull } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import * as schema from "../../drizzle/schema";
import { accounts, apiKeys } from "../../drizzle/schema";
import { isUuid } from "../../domain/ids";
import { generateApiKey, generateWebhookSecret, hashApiKey } from "../../domain/keys";
import { isAbsoluteHttpUrl } from "../../domain/urls";
import type { PlanId } from "../../domain/plans";
import { keyCacheEntry } from "../../worker/middleware/auth";

export interface AdminConnections {
  databaseUrl: string;
  redis?: { url: string; token: string };
}

/**
 * Account, key and webhook operations against the service's database. Every change that alters
 * what a cached key lookup returns also drops that account's cache entries.
 */
export function openAdmin(conn: AdminConnections) {
  const pool = new pg.Pool({ connectionString: conn.databaseUrl, max: 2 });
  // An idle connection the server ended (a restart) is dropped by the pool, which opens a new one
  // for the next query; unheard, its error would take the whole process down.
  pool.on("error", () => undefined);
  const db = drizzle(pool, { schema });
  const redis = conn.redis ? new Redis({ url: conn.redis.url, token: conn.redis.token }) : null;

  async function forgetCachedKeys(accountId: string) {
    if (!redis) return;
    const rows = await db.select({ hash: apiKeys.hash }).from(apiKeys).where(eq(apiKeys.accountId, accountId));
    if (rows.length) await redis.del(...rows.map((r) => keyCacheEntry(r.hash)));
  }

  /** Operator mistakes read as such, not as database errors. */
  async function requireAccount(accountId: string) {
    const [row] = isUuid(accountId) ? await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)) : [];
    if (!row) throw new Error(`No account ${accountId}`);
  }

  async function createKey(accountId: string, legacy = false) {
    await requireAccount(accountId);
    const apiKey = generateApiKey(legacy ? "sk_" : "spk_");
    const [row] = await db
      .insert(apiKeys)
      .values({ accountId, hash: await hashApiKey(apiKey), last4: apiKey.slice(-4) })
      .returning({ id: apiKeys.id });
    return { keyId: row.id, apiKey };
  }

  return {
    async createAccount(plan: PlanId) {
      const [account] = await db.insert(accounts).values({ plan }).returning({ id: accounts.id });
      const { apiKey } = await createKey(account.id);
      return { accountId: account.id, apiKey };
    },
    createKey,
    async revokeKey(apiKeyOrId: string) {
      const isKey = apiKeyOrId.startsWith("spk_") || apiKeyOrId.startsWith("sk_");
      if (!isKey && !isUuid(apiKeyOrId)) throw new Error("No active key matches");
      const match = isKey ? eq(apiKeys.hash, await hashApiKey(apiKeyOrId)) : eq(apiKeys.id, apiKeyOrId);
      const [row] = await db
        .update(apiKeys)
        .set({ revokedAt: new Date() })
        .where(and(match, isNull(apiKeys.revokedAt)))
        .returning({ keyId: apiKeys.id, hash: apiKeys.hash });
      if (!row) throw new Error("No active key matches");
      await redis?.del(keyCacheEntry(row.hash));
      return { keyId: row.keyId, revoked: true };
    },
    async setWebhook(accountId: string, url: string) {
      if (!isAbsoluteHttpUrl(url)) throw new Error(`The webhook URL must be an absolute http(s) URL: ${url}`);
      await requireAccount(accountId);
      const secret = generateWebhookSecret();
      await db.update(accounts).set({ webhookUrl: url, webhookSecret: secret }).where(eq(accounts.id, accountId));
      await forgetCachedKeys(accountId);
      return { webhookUrl: url, secret };
    },
    async setPlan(accountId: string, plan: PlanId) {
      await requireAccount(accountId);
      await db.update(accounts).set({ plan }).where(eq(accounts.id, accountId));
      await forgetCachedKeys(accountId);
      return { accountId, plan };
    },
    db,
    close: () => pool.end(),
  };
}

export type Admin = ReturnType<typeof openAdmin>;
