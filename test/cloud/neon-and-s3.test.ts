import { createServer, type Socket } from "node:net";
import { Client, Pool, neonConfig } from "@neondatabase/serverless";
import { AwsClient } from "aws4fetch";
import { serialize } from "pg-protocol";
import ws from "ws";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startLocalCloud, type LocalCloud } from "../../dev/cloud";
import { startNeonWsProxy } from "../../dev/cloud/neon-ws-proxy";
import { startS3Server } from "../../dev/cloud/s3-server";
import { createStorage } from "../../worker/services/storage";
import { POSTGRES_ADMIN_URL } from "../support/postgres";

neonConfig.webSocketConstructor = ws as never;
neonConfig.useSecureWebSocket = false;
neonConfig.pipelineConnect = false;

/**
 * Lets any client in (AuthenticationOk, ReadyForQuery) and then only listens: it never hangs up,
 * not after Terminate, not even when the other side ends (half-open), as PGlite's socket server
 * did not. `ended`: the other side has ended the connection.
 */
async function serverThatNeverHangsUp() {
  const connections: { received: Buffer; ended: boolean }[] = [];
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    const connection = { received: Buffer.alloc(0), ended: false };
    connections.push(connection);
    sockets.add(socket);
    socket.on("data", (chunk) => {
      if (connection.received.length === 0)
        socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0, 0x5a, 0, 0, 0, 5, 0x49]));
      connection.received = Buffer.concat([connection.received, chunk]);
    });
    socket.on("end", () => (connection.ended = true));
    socket.on("error", () => undefined);
  });
  server.on("error", () => undefined);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function exercise(databaseUrl: string, proxy: string) {
  neonConfig.wsProxy = (host, port) => `${proxy}/v1?address=${host}:${port}`;
  const pool = new Pool({ connectionString: databaseUrl });
  try {
    const { rows } = await pool.query("select 1 + 1 as two");
    expect(rows[0].two).toBe(2);
    const client = await pool.connect();
    await client.query("begin");
    await client.query("create temporary table t (n int)");
    await client.query("insert into t values (1), (2)");
    const sum = await client.query("select sum(n)::int as s from t");
    await client.query("rollback");
    client.release();
    expect(sum.rows[0].s).toBe(3);
  } finally {
    await pool.end();
  }
}

describe("Neon WebSocket proxy, through the official @neondatabase/serverless Pool", () => {
  it("reaches the machine's PostgreSQL: a query and an interactive transaction", async () => {
    const proxy = await startNeonWsProxy();
    await exercise(POSTGRES_ADMIN_URL, proxy.address);
    await proxy.stop();
  });

  it("ends the database connection at the client's Terminate, even with a server that does not hang up", async () => {
    const server = await serverThatNeverHangsUp();
    const proxy = await startNeonWsProxy();
    neonConfig.wsProxy = (host, port) => `${proxy.address}/v1?address=${host}:${port}`;
    try {
      const client = new Client({ connectionString: `postgres://u:p@127.0.0.1:${server.port}/db` });
      await client.connect();
      // The driver's end() waits for the connection to close; it never closes its WebSocket itself.
      await client.end();
      const [connection] = server.connections;
      expect(connection.ended).toBe(true);
      expect(connection.received.subarray(-5)).toEqual(serialize.end());
    } finally {
      await proxy.stop();
      await server.stop();
    }
  });

  it("closes the database connection when the WebSocket closes without a Terminate", async () => {
    const server = await serverThatNeverHangsUp();
    const proxy = await startNeonWsProxy();
    try {
      const socket = new ws(`ws://${proxy.address}/v1?address=127.0.0.1:${server.port}`);
      await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
      socket.send(serialize.startup({ user: "u", database: "db" }));
      await vi.waitFor(() => expect(server.connections).toHaveLength(1));
      expect(server.connections[0].ended).toBe(false);
      socket.terminate();
      await vi.waitFor(() => expect(server.connections[0].ended).toBe(true), { timeout: 5000 });
    } finally {
      await proxy.stop();
      await server.stop();
    }
  });

  it("a database it cannot reach is a FATAL connection_failure for the client, naming the cause", async () => {
    const proxy = await startNeonWsProxy();
    neonConfig.wsProxy = (host, port) => `${proxy.address}/v1?address=${host}:${port}`;
    const pool = new Pool({ connectionString: "postgres://u:p@127.0.0.1:9/db" });
    try {
      await expect(pool.query("select 1")).rejects.toMatchObject({
        code: "08006",
        message: expect.stringMatching(/127\.0\.0\.1:9: connect ECONNREFUSED/),
      });
    } finally {
      await pool.end().catch(() => undefined);
      await proxy.stop();
    }
  });

  it("holds at most maxConnections database connections: further clients wait their turn, as at Neon's pooler, and are not refused", async () => {
    const proxy = await startNeonWsProxy("127.0.0.1", { maxConnections: 2 });
    neonConfig.wsProxy = (host, port) => `${proxy.address}/v1?address=${host}:${port}`;
    const clients = Array.from({ length: 5 }, () => new Client({ connectionString: POSTGRES_ADMIN_URL }));
    const watcher = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await watcher.connect();
    const mine = async () =>
      Number(
        (await watcher.query("select count(*) from pg_stat_activity where application_name = 'held-by-test'")).rows[0]
          .count,
      );
    try {
      // Each client takes a connection and keeps it a while; five of them through two slots.
      const done = clients.map(async (client) => {
        await client.connect();
        await client.query("set application_name = 'held-by-test'");
        await client.query("select pg_sleep(0.3)");
        await client.end();
      });
      await vi.waitFor(async () => expect(await mine()).toBe(2));
      let most = 0;
      // Samples run one after another, and the last has finished before the watcher ends.
      let sampling = Promise.resolve();
      const watching = setInterval(() => {
        sampling = sampling.then(async () => {
          most = Math.max(most, await mine());
        });
      }, 20);
      await Promise.all(done);
      clearInterval(watching);
      await sampling;
      expect(most).toBeLessThanOrEqual(2);
    } finally {
      await watcher.end();
      await proxy.stop();
    }
  });

  it("a client that waits longer than the queue timeout is told so, FATAL, rather than left hanging", async () => {
    const proxy = await startNeonWsProxy("127.0.0.1", { maxConnections: 1, queueTimeoutMs: 300 });
    neonConfig.wsProxy = (host, port) => `${proxy.address}/v1?address=${host}:${port}`;
    const holder = new Client({ connectionString: POSTGRES_ADMIN_URL });
    const waiter = new Client({ connectionString: POSTGRES_ADMIN_URL });
    try {
      await holder.connect();
      await expect(waiter.connect()).rejects.toMatchObject({
        code: "08006",
        message: expect.stringMatching(/no database connection came free within 0\.3 s/),
      });
      expect((await holder.query("select 1 as one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await holder.end();
      await proxy.stop();
    }
  });

  it("refuses to connect anywhere but loopback", async () => {
    const proxy = await startNeonWsProxy();
    neonConfig.wsProxy = (host, port) => `${proxy.address}/v1?address=${host}:${port}`;
    const pool = new Pool({ connectionString: "postgres://u:p@10.0.0.1:5432/db", connectionTimeoutMillis: 3000 });
    await expect(pool.query("select 1")).rejects.toThrow();
    await pool.end().catch(() => undefined);
    await proxy.stop();
  });
});

describe("startLocalCloud with the embedded PostgreSQL", () => {
  let cloud: LocalCloud;
  beforeAll(async () => {
    cloud = await startLocalCloud();
  });
  afterAll(() => cloud.stop());

  it("PostgreSQL 17 through the proxy: a query and a transaction", async () => {
    await exercise(cloud.databaseUrl, cloud.neonWsProxy);
    const client = new pg.Client(cloud.databaseUrl);
    await client.connect();
    const { rows } = await client.query("show server_version");
    await client.end();
    expect(rows[0].server_version).toMatch(/^17\./);
  });

  it("every Pool's connection leaves the server when the Pool ends: 20 at once, then back to the count before", async () => {
    neonConfig.wsProxy = (host, port) => `${cloud.neonWsProxy}/v1?address=${host}:${port}`;
    const watcher = new pg.Pool({ connectionString: cloud.databaseUrl, max: 1 });
    const others = async () =>
      Number(
        (
          await watcher.query(
            "select count(*) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
          )
        ).rows[0].count,
      );
    try {
      const before = await others();
      let during = 0;
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          const pool = new Pool({ connectionString: cloud.databaseUrl });
          await pool.query("select pg_sleep(0.2)");
          during = Math.max(during, await others());
          await pool.end();
        }),
      );
      expect(during).toBeGreaterThan(before);
      await vi.waitFor(async () => expect(await others()).toBe(before), { timeout: 15_000, interval: 100 });
    } finally {
      await watcher.end();
    }
  });

  it("stops cleanly: its ports are closed afterwards", async () => {
    const other = await startLocalCloud();
    const { s3, databaseUrl } = other;
    await other.stop();
    await expect(fetch(s3.endpoint)).rejects.toThrow();
    const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 3000 });
    await expect(client.connect()).rejects.toThrow();
  });
});

describe("S3 server with SigV4, through aws4fetch", () => {
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let client: AwsClient;
  const bucket = "outputs";
  beforeAll(async () => {
    s3 = await startS3Server({ host: "127.0.0.1", directory: `/tmp/s3-test-${process.pid}`, bucket });
    client = new AwsClient({
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      service: "s3",
      region: "auto",
    });
  });
  afterAll(() => s3.stop());

  const storage = () =>
    createStorage({
      S3_ENDPOINT: s3.endpoint,
      S3_REGION: "auto",
      S3_BUCKET: bucket,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    } as never);

  it("signed PUT and GET work; unsigned and wrongly signed requests are refused", async () => {
    const url = `${s3.endpoint}/${bucket}/a/b.txt`;
    expect((await client.fetch(url, { method: "PUT", body: "content" })).status).toBe(200);
    expect(await (await client.fetch(url)).text()).toBe("content");
    expect((await fetch(url)).status).toBe(403);
    const wrong = new AwsClient({
      accessKeyId: s3.accessKeyId,
      secretAccessKey: "not-the-secret",
      service: "s3",
      region: "auto",
    });
    expect((await wrong.fetch(url)).status).toBe(403);
  });

  it("a presigned GET works with no Authorization header; tampered or expired ones are refused", async () => {
    await client.fetch(`${s3.endpoint}/${bucket}/p.txt`, { method: "PUT", body: "presigned" });
    const link = await storage().signGet("p.txt", 60);
    expect(await (await fetch(link.url)).text()).toBe("presigned");
    expect((await fetch(link.url.split("?")[0])).status).toBe(403);
    const tampered = new URL(link.url);
    tampered.searchParams.set("X-Amz-Expires", "3600");
    expect((await fetch(tampered)).status).toBe(403);
    const expired = await storage().signGet("p.txt", 1, new Date(Date.now() - 10_000));
    expect((await fetch(expired.url)).status).toBe(403);
  });

  it("expiresAt is when the link stops working: its signing second plus X-Amz-Expires, to the millisecond", async () => {
    const link = await storage().signGet("p.txt", 3600, new Date("2026-11-26T10:00:00.999Z"));
    const params = new URL(link.url).searchParams;
    expect(params.get("X-Amz-Date")).toBe("20261126T100000Z");
    expect(params.get("X-Amz-Expires")).toBe("3600");
    expect(link.expiresAt.toISOString()).toBe("2026-11-26T11:00:00.000Z");
  });

  it("exists() tells present from removed objects", async () => {
    await client.fetch(`${s3.endpoint}/${bucket}/gone.txt`, { method: "PUT", body: "x" });
    expect(await storage().exists("gone.txt")).toBe(true);
    await client.fetch(`${s3.endpoint}/${bucket}/gone.txt`, { method: "DELETE" });
    expect(await storage().exists("gone.txt")).toBe(false);
  });
});
