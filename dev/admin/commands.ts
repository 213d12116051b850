import { Redis } from "@upstash/redis";
import { count, desc, eq, isNull } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import * as schema from "../../drizzle/schema";
import { CONNECT_TIMEOUT_MS } from "../cloud/unreachable";
import { accounts, apiKeys, users } from "../../drizzle/schema";
import { isUuid } from "../../domain/ids";
import { hashApiKey } from "../../domain/keys";
import { PLAN_DISPLAY_NAMES, type PlanId } from "../../domain/plans";
import { iso, quotaPeriod } from "../../domain/time";
import { forgetCachedKeys, issueApiKey, listApiKeys, revokeApiKey } from "../../worker/dashboard/lib/api-keys";
import { KEY_CACHE_TTL, markKeysChanged } from "../../worker/lib/key-cache";
import {
  addUser,
  createUserWithAccount,
  emailSchema,
  passwordSchema,
  setPassword,
} from "../../worker/dashboard/lib/users";
import { usageThisMonth } from "../../worker/dashboard/lib/usage";
import { rotateWebhookSecret, webhookUrlProblem } from "../../worker/dashboard/lib/webhook";

export interface AdminConnections {
  databaseUrl: string;
  redis?: { url: string; token: string };
  /** Monthly quota overrides, as the Worker's QUOTA_LIMITS (for `account show`). */
  quotaLimits?: string;
}

/**
 * A change made in the database whose cache step failed: the change stands, and `done` says what
 * it was (a new webhook secret is shown nowhere else); the API may go on with what it had cached
 * until the entries expire.
 */
export class CacheNotCleared extends Error {
  constructor(
    readonly done: unknown,
    what: string,
    cause: unknown,
  ) {
    super(
      `${what}, but the API's cache of key lookups could not be told (it expires within ${KEY_CACHE_TTL} s; until then the API may go on as before)`,
      { cause },
    );
  }
}

/** The cache step of a change already made, reported as such when it fails. */
async function thenTellCache<T>(done: T, what: string, tell: () => Promise<unknown>): Promise<T> {
  try {
    await tell();
  } catch (err) {
    throw new CacheNotCleared(done, what, err);
  }
  return done;
}

/** Operator input read as the dashboard reads it: a clear message instead of a database error. */
function valid<T>(
  result: { success: true; data: T } | { success: false; error: { issues: { message: string }[] } },
  what: string,
): T {
  if (!result.success) throw new Error(`${what}: ${result.error.issues[0].message}`);
  return result.data;
}

/**
 * Account, user, key and webhook operations against the service's database, through the same
 * functions the dashboard uses. Every change that alters what a cached key lookup returns also
 * marks that account's cache entries changed (worker/lib/key-cache.ts).
 */
export function openAdmin(conn: AdminConnections) {
  const pool = new pg.Pool({ connectionString: conn.databaseUrl, max: 2, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // An idle connection the server ended (a restart) is dropped by the pool, which opens a new one
  // for the next query; unheard, its error would take the whole process down.
  pool.on("error", () => undefined);
  const db = drizzle(pool, { schema });
  const redis = conn.redis ? new Redis({ url: conn.redis.url, token: conn.redis.token }) : null;

  /** Operator mistakes read as such, not as database errors. */
  async function requireAccount(accountId: string) {
    const [row] = isUuid(accountId) ? await db.select().from(accounts).where(eq(accounts.id, accountId)) : [];
    if (!row) throw new Error(`No account ${accountId}`);
    return row;
  }

  async function createKey(accountId: string, legacy = false, name: string | null = null) {
    await requireAccount(accountId);
    return issueApiKey(db, accountId, { name, prefix: legacy ? "sk_" : "spk_" });
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
      const row = await revokeApiKey(db, null, match);
      if (!row) throw new Error("No active key matches");
      const done = { keyId: row.keyId, revoked: true };
      return thenTellCache(done, `Key ${row.keyId} is revoked (the revocation stands)`, async () => {
        if (!redis) return;
        const [key] = await db.select({ hash: apiKeys.hash }).from(apiKeys).where(eq(apiKeys.id, row.keyId));
        await markKeysChanged(redis, [key.hash]);
      });
    },
    async setWebhook(accountId: string, url: string) {
      const problem = webhookUrlProblem(url);
      if (problem) throw new Error(problem);
      await requireAccount(accountId);
      const { secret } = await rotateWebhookSecret(db, null, accountId, url);
      return thenTellCache(
        { webhookUrl: url, secret },
        `The webhook of account ${accountId} is set (the change stands)`,
        () => forgetCachedKeys(db, redis, accountId),
      );
    },
    async setPlan(accountId: string, plan: PlanId) {
      await requireAccount(accountId);
      await db.update(accounts).set({ plan }).where(eq(accounts.id, accountId));
      return thenTellCache({ accountId, plan }, `Account ${accountId} is on the ${plan} plan (the change stands)`, () =>
        forgetCachedKeys(db, redis, accountId),
      );
    },
    async listAccounts() {
      const activeKeys = db
        .select({ accountId: apiKeys.accountId, n: count().as("n") })
        .from(apiKeys)
        .where(isNull(apiKeys.revokedAt))
        .groupBy(apiKeys.accountId)
        .as("active_keys");
      const rows = await db
        .select({
          accountId: accounts.id,
          plan: accounts.plan,
          email: users.email,
          activeKeys: activeKeys.n,
          webhookUrl: accounts.webhookUrl,
          createdAt: accounts.createdAt,
        })
        .from(accounts)
        .leftJoin(users, eq(users.accountId, accounts.id))
        .leftJoin(activeKeys, eq(activeKeys.accountId, accounts.id))
        .orderBy(desc(accounts.createdAt), desc(accounts.id));
      return rows.map((r) => ({ ...r, activeKeys: Number(r.activeKeys ?? 0), createdAt: iso(r.createdAt) }));
    },
    async showAccount(accountId: string) {
      const account = await requireAccount(accountId);
      const [user] = await db.select({ email: users.email }).from(users).where(eq(users.accountId, accountId));
      const usage = await usageThisMonth(db, { QUOTA_LIMITS: conn.quotaLimits }, accountId, account.plan);
      const keys = await listApiKeys(db, accountId);
      return {
        accountId,
        plan: account.plan,
        planName: PLAN_DISPLAY_NAMES[account.plan],
        email: user?.email ?? null,
        createdAt: iso(account.createdAt),
        usage: { period: quotaPeriod(new Date()), used: usage.used, limit: usage.limit, resetsAt: iso(usage.resetsAt) },
        // The secret is not printed: `webhook set` makes a new one when an operator needs it.
        webhook: account.webhookUrl ? { url: account.webhookUrl, secretSet: Boolean(account.webhookSecret) } : null,
        keys: { active: keys.filter((k) => !k.revokedAt).length, revoked: keys.filter((k) => k.revokedAt).length },
      };
    },
    async listKeys(accountId: string) {
      await requireAccount(accountId);
      const keys = await listApiKeys(db, accountId);
      return keys.map((k) => ({
        keyId: k.id,
        name: k.name,
        last4: k.last4,
        createdAt: iso(k.createdAt),
        revokedAt: iso(k.revokedAt),
      }));
    },
    /** A dashboard user with a new account on `plan`. */
    async createUser(input: { email: string; password: string; plan: PlanId }) {
      const email = valid(emailSchema.safeParse(input.email), "email");
      const password = valid(passwordSchema.safeParse(input.password), "password");
      return createUserWithAccount(db, { email, password, plan: input.plan });
    },
    /** A dashboard sign-in for an existing account (npm run dev's account). */
    async addUser(accountId: string, input: { email: string; password: string }) {
      await requireAccount(accountId);
      return addUser(db, { accountId, ...input });
    },
    async setUserPassword(rawEmail: string, rawPassword: string) {
      const email = valid(emailSchema.safeParse(rawEmail), "email");
      const password = valid(passwordSchema.safeParse(rawPassword), "password");
      const done = await setPassword(db, email, password);
      if (!done) throw new Error(`No user ${email}`);
      return { email, ...done };
    },
    db,
    close: () => pool.end(),
  };
}

export type Admin = ReturnType<typeof openAdmin>;
