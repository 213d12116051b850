import { and, eq, isNull, sql, type SQLWrapper } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { accounts, apiKeys, jobs } from "../../drizzle/schema";
import { isUuid } from "../../domain/ids";
import { hashApiKey, parseBearer } from "../../domain/keys";
import type { AppEnv, Caller, Services } from "../context";
import { ApiError } from "../errors";
import { preparedPerDatabase } from "../services/db";

/** Seconds a key lookup is cached; revocation and plan changes also delete the entry. */
const KEY_CACHE_TTL = 60;

export const keyCacheEntry = (hash: string) => `apikey:${hash}`;

/** What a caller is made of, and the one rule for a key that authenticates: known and not revoked. */
const callerColumns = { keyId: apiKeys.id, accountId: accounts.id, plan: accounts.plan, webhookUrl: accounts.webhookUrl };
const activeKey = (hash: SQLWrapper) => and(eq(apiKeys.hash, hash), isNull(apiKeys.revokedAt));

const callerOfKey = preparedPerDatabase((db) =>
  db
    .select(callerColumns)
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(activeKey(sql.placeholder("hash")))
    .limit(1)
    .prepare("caller_of_key"),
);

/** The key's caller and, when the id names one of the caller's jobs, that job: one row, or none for a key that does not authenticate. */
const callerAndOwnJob = preparedPerDatabase((db) =>
  db
    .select({ caller: callerColumns, job: jobs })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .leftJoin(jobs, and(eq(jobs.id, sql.placeholder("id")), eq(jobs.accountId, accounts.id)))
    .where(activeKey(sql.placeholder("hash")))
    .limit(1)
    .prepare("caller_and_own_job"),
);

async function lookupCaller(services: Services, header: string | undefined): Promise<Caller | null> {
  const key = parseBearer(header);
  if (!key) return null;
  const hash = await hashApiKey(key);
  const cached = await services.cache.get<Caller>(keyCacheEntry(hash)).catch(() => null);
  if (cached) return cached;

  const [row] = await callerOfKey(services.db).execute({ hash });
  if (!row) return null;
  await services.cache.set(keyCacheEntry(hash), row, { ex: KEY_CACHE_TTL }).catch(() => undefined);
  return row;
}

/** The five failure cases (missing, malformed, wrong prefix, unknown, revoked) share one 401. */
export const requireCaller = createMiddleware<AppEnv>(async (c, next) => {
  const caller = await lookupCaller(c.get("services"), c.req.header("Authorization"));
  if (!caller) throw ApiError.unauthorized();
  c.set("caller", caller);
  await next();
});

/**
 * requireCaller for the routes that answer about one job of the caller's (GET /jobs/{id} and its
 * download-url): the key is checked in the query that reads the job, a join on the key and its
 * account, so a read is one round trip rather than the key cache's and then the database's. The
 * same 401 for every failing key, checked before the id is looked at; a revoked key fails at once.
 * Sets `ownJob`: the job, or undefined for an unknown id, a malformed one, or another account's job.
 */
export const requireCallerWithOwnJob = createMiddleware<AppEnv>(async (c, next) => {
  const key = parseBearer(c.req.header("Authorization"));
  if (!key) throw ApiError.unauthorized();
  const id = c.req.param("id") ?? "";
  const [row] = await callerAndOwnJob(c.get("services").db).execute({ hash: await hashApiKey(key), id: isUuid(id) ? id : null });
  if (!row) throw ApiError.unauthorized();
  c.set("caller", row.caller);
  c.set("ownJob", row.job ?? undefined);
  await next();
});

/** GET /presets: a key is optional, but one that is sent must be valid. */
export const optionalCaller = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header("Authorization");
  // Blank (nothing but HTTP's spaces and tabs) is no credential at all, and proxies (wrangler dev
  // among them) drop such a header before it arrives: read it as absent everywhere, so the answer
  // never depends on the path. Not String.trim(): U+2028 and friends are characters here, not space.
  if (header === undefined || /^[\t ]*$/.test(header)) {
    c.set("optionalCaller", null);
  } else {
    const caller = await lookupCaller(c.get("services"), header);
    if (!caller) throw ApiError.unauthorized();
    c.set("optionalCaller", caller);
  }
  await next();
});
