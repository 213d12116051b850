import { and, eq, isNull, sql } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { accounts, apiKeys } from "../../drizzle/schema";
import { hashApiKey, parseBearer } from "../../domain/keys";
import type { AppEnv, Caller, Services } from "../context";
import { ApiError } from "../errors";
import { preparedPerDatabase } from "../services/db";

/** Seconds a key lookup is cached; revocation and plan changes also delete the entry. */
const KEY_CACHE_TTL = 60;

export const keyCacheEntry = (hash: string) => `apikey:${hash}`;

const callerOfKey = preparedPerDatabase((db) =>
  db
    .select({ keyId: apiKeys.id, accountId: accounts.id, plan: accounts.plan, webhookUrl: accounts.webhookUrl })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(and(eq(apiKeys.hash, sql.placeholder("hash")), isNull(apiKeys.revokedAt)))
    .limit(1)
    .prepare("caller_of_key"),
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
