import { Redis } from "@upstash/redis";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisRest } from "../../dev/cloud/redis-rest";
import {
  cachedCaller,
  KEY_CACHE_TTL,
  keyCacheEntry,
  markKeysChanged,
  rememberCaller,
} from "../../worker/lib/key-cache";
import type { Caller } from "../../worker/context";

/**
 * The Worker's cache of key lookups (worker/lib/key-cache.ts) over the Upstash REST stand-in on
 * the machine's Redis, through the official client. A lookup reads the database, then caches what
 * it read: a revocation can fall between the two, and must win.
 */
let server: Awaited<ReturnType<typeof startRedisRest>>;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisRest({ host: "127.0.0.1", redisUrl: "redis://127.0.0.1:6379" });
  redis = new Redis({ url: server.url, token: server.token });
});
afterAll(() => server.stop());

const caller = (plan: Caller["plan"] = "pro"): Caller => ({
  accountId: randomUUID(),
  keyId: randomUUID(),
  plan,
  webhookUrl: null,
});
const newHash = () => `test-${randomUUID()}`;

describe("the key lookup cache", () => {
  it("keeps a lookup for its lifetime", async () => {
    const hash = newHash();
    expect(await cachedCaller(redis, hash)).toEqual({ kind: "none" });
    const found = caller();
    await rememberCaller(redis, hash, found);
    expect(await cachedCaller(redis, hash)).toEqual({ kind: "caller", caller: found });
    expect(await redis.ttl(keyCacheEntry(hash))).toBeGreaterThan(KEY_CACHE_TTL - 5);
  });

  it("a revocation after a lookup was cached replaces it, for a lifetime", async () => {
    const hash = newHash();
    await rememberCaller(redis, hash, caller());
    await markKeysChanged(redis, [hash]);
    expect(await cachedCaller(redis, hash)).toEqual({ kind: "changed" });
    expect(await redis.ttl(keyCacheEntry(hash))).toBeGreaterThan(KEY_CACHE_TTL - 5);
  });

  it("a lookup that read the database before a revocation and caches after it does not bring the key back", async () => {
    const hash = newHash();
    const readBeforeRevocation = caller();
    await markKeysChanged(redis, [hash]);
    await rememberCaller(redis, hash, readBeforeRevocation);
    expect(await cachedCaller(redis, hash)).toEqual({ kind: "changed" });
  });

  it("a plan change marks every key of the account at once", async () => {
    const hashes = [newHash(), newHash(), newHash()];
    for (const hash of hashes) await rememberCaller(redis, hash, caller("free"));
    await markKeysChanged(redis, hashes);
    for (const hash of hashes) expect(await cachedCaller(redis, hash)).toEqual({ kind: "changed" });
  });
});
