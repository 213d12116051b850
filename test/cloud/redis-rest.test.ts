import { connect, createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { Redis } from "@upstash/redis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startRedisRest } from "../../dev/cloud/redis-rest";

for (const backing of ["real Redis", "in memory"] as const) {
  describe(`Upstash REST stand-in (${backing}), through the official @upstash/redis client`, () => {
    let server: Awaited<ReturnType<typeof startRedisRest>>;
    let redis: Redis;
    const prefix = `test:${process.pid}:${Date.now()}:`;
    beforeAll(async () => {
      server = await startRedisRest({
        host: "127.0.0.1",
        redisUrl: backing === "real Redis" ? "redis://127.0.0.1:6379" : undefined,
      });
      redis = new Redis({ url: server.url, token: server.token });
    });
    afterAll(() => server.stop());

    it("set/get objects and strings (base64 response encoding, the client's default)", async () => {
      expect(await redis.set(`${prefix}a`, { plan: "free", n: 1 })).toBe("OK");
      expect(await redis.get(`${prefix}a`)).toEqual({ plan: "free", n: 1 });
      await redis.set(`${prefix}s`, "héllo wörld");
      expect(await redis.get(`${prefix}s`)).toBe("héllo wörld");
      expect(await redis.get(`${prefix}missing`)).toBeNull();
    });

    it("expiry, counters and deletion", async () => {
      await redis.set(`${prefix}e`, "x", { ex: 60 });
      const ttl = await redis.ttl(`${prefix}e`);
      expect(ttl).toBeGreaterThan(50);
      expect(await redis.incr(`${prefix}c`)).toBe(1);
      expect(await redis.incrby(`${prefix}c`, 5)).toBe(6);
      expect(await redis.del(`${prefix}c`, `${prefix}e`)).toBe(2);
      expect(await redis.exists(`${prefix}c`)).toBe(0);
      // Two seconds: a loaded run can hold the call after the set past a shorter expiry.
      await redis.set(`${prefix}px`, "y", { px: 2000 });
      const pttl = await redis.pttl(`${prefix}px`);
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(2000);
      // The server's clock decides when it goes: wait for that, not for a fixed time.
      await vi.waitFor(async () => expect(await redis.get(`${prefix}px`)).toBeNull(), { timeout: 5000, interval: 20 });
    });

    it("pipelines and transactions", async () => {
      const p = redis.pipeline();
      p.set(`${prefix}p1`, "one");
      p.incr(`${prefix}p2`);
      p.get(`${prefix}p1`);
      expect(await p.exec()).toEqual(["OK", 1, "one"]);
      const tx = redis.multi();
      tx.incr(`${prefix}p2`);
      tx.get(`${prefix}p2`);
      expect(await tx.exec()).toEqual([2, 2]);
    });

    it("refuses a wrong token", async () => {
      const stranger = new Redis({ url: server.url, token: "wrong" });
      await expect(stranger.get("x")).rejects.toThrow();
    });

    it("answers a request it cannot read with a 400 and goes on (a path that does not parse)", async () => {
      const res = await fetch(`${server.url}//`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}` },
        body: '["GET","x"]',
      });
      expect(res.status).toBe(400);
      expect(await redis.set(`${prefix}after`, "still here")).toBe("OK");
    });
  });
}

describe("Upstash REST stand-in when its Redis connection breaks", () => {
  it("the process lives on (node-redis re-emits the reset on its client), and a command meanwhile answers an error, as Upstash's do, rather than waiting", async () => {
    // A proxy in front of the machine's Redis, whose connections the test cuts.
    const links = new Set<Socket>();
    const proxy = createNetServer((inbound) => {
      const outbound = connect(6379, "127.0.0.1");
      for (const socket of [inbound, outbound]) {
        links.add(socket);
        socket.on("error", () => undefined);
        socket.on("close", () => links.delete(socket));
      }
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    const server = await startRedisRest({
      host: "127.0.0.1",
      redisUrl: `redis://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    });
    try {
      const redis = new Redis({ url: server.url, token: server.token, retry: false });
      expect(await redis.set(`test:${process.pid}:cut`, "1")).toBe("OK");
      proxy.close();
      for (const socket of links) socket.destroy(new Error("connection reset"));
      // While node-redis has no connection (the proxy refuses new ones), a command fails rather than waits.
      await expect(redis.get(`test:${process.pid}:cut`)).rejects.toThrow();
    } finally {
      await server.stop().catch(() => undefined);
    }
  });
});
