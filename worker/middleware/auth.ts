import { eq, sql } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { accounts, apiKeys } from "../../drizzle/schema";
import { hashApiKey, parseBearer } from "../../domain/keys";
import type { AppEnv, Caller } from "../context";
import { ApiError } from "../errors";
import { activeKey, callerColumns } from "../lib/callers";
import { cachedCaller, rememberCaller } from "../lib/key-cache";
import type { Services } from "../services";
import { preparedPerDatabase } from "../services/db";

const callerOfKey = preparedPerDatabase((db) =>
  db
    .select(callerColumns)
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(activeKey(sql.placeholder("hash")))
    .limit(1)
    .prepare("caller_of_key"),
);

async function lookupCaller(services: Services, header: string | undefined): Promise<Caller | null> {
  const key = parseBearer(header);
  if (!key) return null;
  const hash = await hashApiKey(key);
  const cached = await cachedCaller(services.cache, hash);
  if (cached.kind === "caller") return cached.caller;

  const [row] = await callerOfKey(services.db).execute({ hash });
  if (!row) return null;
  if (cached.kind === "none") await rememberCaller(services.cache, hash, row);
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
 * requireCaller for a route whose answer starts with a database read of the caller's own rows
 * (a job, a page of jobs): `read` runs that query with the key and its account joined in and
 * the key's rule applied (lib/callers.ts), keeps what it read on the context, and
 * gives back the caller, or undefined when the key does not authenticate. One round trip instead
 * of two (the key cache's, then the database's); a revoked key fails at once. No header, or
 * one that is not a key, fails before any query, with the same 401.
 */
export function requireCallerIn(read: (c: Context<AppEnv>, keyHash: string) => Promise<Caller | undefined>) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const key = parseBearer(c.req.header("Authorization"));
    if (!key) throw ApiError.unauthorized();
    const caller = await read(c, await hashApiKey(key));
    if (!caller) throw ApiError.unauthorized();
    c.set("caller", caller);
    await next();
  });
}

/**
 * requireCaller for POST /jobs, whose creation statement checks the key itself
 * (lib/create-job.ts): one round trip instead of two (the key cache's, then the database's).
 * Here only the header's form is checked, and the key's hash kept as the `creator`. A request
 * refused with a 400 (a body that does not validate, an unknown preset: answered before the
 * statement runs) looks the key up first, so a key that does not authenticate is still a 401
 * before anything else. A request with an Idempotency-Key needs its caller before the handler
 * (the reservation is the account's) and is checked as requireCaller does.
 */
export const requireCreator = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header("Authorization");
  if (c.req.header("Idempotency-Key") !== undefined) {
    const caller = await lookupCaller(c.get("services"), header);
    if (!caller) throw ApiError.unauthorized();
    c.set("caller", caller);
    c.set("creator", { caller });
    return next();
  }
  const key = parseBearer(header);
  if (!key) throw ApiError.unauthorized();
  c.set("creator", { keyHash: await hashApiKey(key) });
  await next();
  if (c.error instanceof ApiError && c.error.status === 400 && !(await lookupCaller(c.get("services"), header)))
    throw ApiError.unauthorized();
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
