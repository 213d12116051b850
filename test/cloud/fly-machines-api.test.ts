import { Redis } from "@upstash/redis";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFlyMachinesApi } from "../../dev/cloud/fly-machines-api";
import { startRedisRest } from "../../dev/cloud/redis-rest";
import type { PoolMachine } from "../../domain/pool";
import { parseEnv } from "../../worker/env";
import { createPool } from "../../worker/services/pool";
import { WORKER_BINDINGS } from "../support/worker-bindings";

/**
 * The Worker's count of the encoder pool (worker/services/pool.ts) against the stand-in for Fly's
 * Machines API, remembered in the machine's Redis behind the Upstash REST stand-in.
 */
let redisRest: Awaited<ReturnType<typeof startRedisRest>>;
let redis: Redis;
beforeAll(async () => {
  redisRest = await startRedisRest({ host: "127.0.0.1", redisUrl: "redis://127.0.0.1:6379" });
  redis = new Redis({ url: redisRest.url, token: redisRest.token });
});
afterAll(() => redisRest.stop());

const machines = (count: number, hardLimit?: number): PoolMachine[] =>
  Array.from({ length: count }, (_, i) => ({
    id: `m${i}`,
    state: "started",
    config: { services: [{ concurrency: hardLimit === undefined ? {} : { hard_limit: hardLimit } }] },
  }));

const bindings = (extra: Record<string, string>) =>
  parseEnv({
    ...WORKER_BINDINGS,
    UPSTASH_REDIS_REST_URL: redisRest.url,
    UPSTASH_REDIS_REST_TOKEN: redisRest.token,
    ...extra,
  });

/** A Machines API for an app of its own, so each test's count in Redis is its own. */
async function flyApp(pool: PoolMachine[]) {
  const api = await startFlyMachinesApi({
    host: "127.0.0.1",
    app: `encoder-${randomBytes(4).toString("hex")}`,
    machines: pool,
  });
  const env = { FLY_APP: api.app, FLY_API_TOKEN: api.token, FLY_API_URL: api.url };
  return { api, env };
}

const poolOf = (env: Record<string, string>) => createPool(bindings(env), () => redis as never);

describe("the encoder pool's count (FLY_APP)", () => {
  it("sets the parts' parallelism to the Machines' deliveries less the whole jobs', asking Fly once a minute", async () => {
    const { api, env } = await flyApp(machines(12, 1));
    try {
      const pool = poolOf(env);
      // A split's parts, published at once, share one count.
      expect(await Promise.all(Array.from({ length: 5 }, () => pool.partParallelism()))).toEqual([10, 10, 10, 10, 10]);
      expect(api.requests()).toBe(1);
      // The pool grows: the count stands for its minute, read from Redis, by this isolate or another.
      api.setMachines(machines(50, 1));
      expect(await pool.partParallelism()).toBe(10);
      expect(await poolOf(env).partParallelism()).toBe(10);
      expect(api.requests()).toBe(1);
      const ttl = await redis.ttl(`pool:${api.app}:part-parallelism`);
      expect(ttl).toBeGreaterThan(50);
      expect(ttl).toBeLessThanOrEqual(60);
      await redis.del(`pool:${api.app}:part-parallelism`);
      expect(await pool.partParallelism()).toBe(48);
    } finally {
      await api.stop();
    }
  });

  it("counts each Machine's hard limit, one where it names none", async () => {
    const { api, env } = await flyApp([...machines(3, 4), ...machines(2)]);
    try {
      expect(await poolOf(env).partParallelism()).toBe(3 * 4 + 2 - 2);
    } finally {
      await api.stop();
    }
  });

  it("a Machines API that refuses the token, or is gone, is logged with its cause and leaves the default of 8", async () => {
    const { api, env } = await flyApp(machines(20, 1));
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      expect(await poolOf({ ...env, FLY_API_TOKEN: "fm2_wrong" }).partParallelism()).toBe(8);
      expect(errors.mock.calls.flat().join("\n")).toMatch(/could not be counted.*answered 401/s);
      await api.stop();
      errors.mockClear();
      await redis.del(`pool:${api.app}:part-parallelism`);
      expect(await poolOf(env).partParallelism()).toBe(8);
      expect(errors.mock.calls.flat().join("\n")).toMatch(/could not be counted/);
    } finally {
      errors.mockRestore();
      await api.stop();
    }
  });

  it("a Redis that does not answer costs a count of the pool per call, never the count", async () => {
    const { api, env } = await flyApp(machines(7, 1));
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const gone = new Redis({ url: "http://127.0.0.1:9", token: "t", retry: false });
      const pool = createPool(bindings(env), () => gone as never);
      expect(await pool.partParallelism()).toBe(5);
      expect(await pool.partParallelism()).toBe(5);
      expect(api.requests()).toBe(2);
      expect(errors.mock.calls.flat().join("\n")).toMatch(/could not be read from Redis.*could not be kept in Redis/s);
    } finally {
      errors.mockRestore();
      await api.stop();
    }
  });

  it("PART_PARALLELISM, when set, stands whatever the pool; neither set, the default of 8", async () => {
    const { api, env } = await flyApp(machines(30, 1));
    try {
      expect(await poolOf({ ...env, PART_PARALLELISM: "5" }).partParallelism()).toBe(5);
      expect(await poolOf({}).partParallelism()).toBe(8);
      expect(api.requests()).toBe(0);
    } finally {
      await api.stop();
    }
  });

  it("answers only its app's Machines, and only for its token", async () => {
    const { api } = await flyApp(machines(2, 1));
    try {
      const get = (path: string, token = api.token) =>
        fetch(`${api.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
      const listed = await get(`/v1/apps/${api.app}/machines`);
      expect(listed.status).toBe(200);
      expect(await listed.json()).toEqual(machines(2, 1));
      expect((await get("/v1/apps/someone-else/machines")).status).toBe(404);
      const refused = await get(`/v1/apps/${api.app}/machines`, "fm2_wrong");
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ error: "unauthorized" });
    } finally {
      await api.stop();
    }
  });
});
