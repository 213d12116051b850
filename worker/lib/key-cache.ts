import type { Redis } from "@upstash/redis/cloudflare";
import type { Caller } from "../context";

/** Seconds a key lookup is cached; revocations and plan or webhook changes mark the entry changed. */
export const KEY_CACHE_TTL = 60;

/**
 * What a change to a key or its account leaves in the key's entry for a cache lifetime, in place
 * of deleting it: the key is looked up in the database, and no lookup is cached, until it
 * expires. A deletion would let a lookup that read the database just before the change write
 * what it read back afterwards, and a revoked key would work for another lifetime.
 */
const CHANGED = "changed";

export const keyCacheEntry = (hash: string) => `apikey:${hash}`;

/** The part of the Upstash client this needs (the Worker's and the admin commands' clients). */
export type KeyCache = Pick<Redis, "get" | "set" | "pipeline">;

export type CachedLookup = { kind: "caller"; caller: Caller } | { kind: "none" } | { kind: "changed" };

/** The cached lookup of the key whose hash is given; a cache that fails is a miss. */
export async function cachedCaller(cache: KeyCache, hash: string): Promise<CachedLookup> {
  const cached = await cache.get<Caller | typeof CHANGED>(keyCacheEntry(hash)).catch(() => null);
  if (cached === CHANGED) return { kind: "changed" };
  return cached ? { kind: "caller", caller: cached } : { kind: "none" };
}

/**
 * Caches a lookup read from the database, unless the entry was written meanwhile: NX, so that a
 * change marked since the read wins over it. Best effort: the next request looks it up again.
 */
export async function rememberCaller(cache: KeyCache, hash: string, caller: Caller): Promise<void> {
  await cache.set(keyCacheEntry(hash), caller, { ex: KEY_CACHE_TTL, nx: true }).catch(() => undefined);
}

/**
 * After a key is revoked or its account changed: its cached lookups give way to the database's.
 * One request for all of an account's keys (a plan or webhook change marks each), not one a key.
 */
export async function markKeysChanged(cache: KeyCache, hashes: string[]): Promise<void> {
  if (!hashes.length) return;
  const marks = cache.pipeline();
  for (const hash of hashes) marks.set(keyCacheEntry(hash), CHANGED, { ex: KEY_CACHE_TTL });
  await marks.exec();
}
