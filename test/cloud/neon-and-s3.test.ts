import { Pool, neonConfig } from "@neondatabase/serverless";
import { AwsClient } from "aws4fetch";
import ws from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalCloud, type LocalCloud } from "../../dev/cloud";
import { startNeonWsProxy } from "../../dev/cloud/neon-ws-proxy";
import { startS3Server } from "../../dev/cloud/s3-server";
import { createStorage } from "../../worker/services/storage";
import { POSTGRES_ADMIN_URL } from "../support/postgres";

neonConfig.webSocketConstructor = ws as never;
neonConfig.useSecureWebSocket = false;
neonConfig.pipelineConnect = false;

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

  it("refuses to connect anywhere but loopback", async () => {
    const proxy = await startNeonWsProxy();
    neonConfig.wsProxy = (host, port) => `${proxy.address}/v1?address=${host}:${port}`;
    const pool = new Pool({ connectionString: "postgres://u:p@10.0.0.1:5432/db", connectionTimeoutMillis: 3000 });
    await expect(pool.query("select 1")).rejects.toThrow();
    await pool.end().catch(() => undefined);
    await proxy.stop();
  });
});

describe("startLocalCloud with PGlite", () => {
  let cloud: LocalCloud;
  beforeAll(async () => {
    cloud = await startLocalCloud();
  });
  afterAll(() => cloud.stop());

  it("PGlite over the wire protocol, through the proxy: a query and a transaction", async () => {
    await exercise(cloud.databaseUrl, cloud.neonWsProxy);
  });

  it("stops cleanly: its ports are closed afterwards", async () => {
    const other = await startLocalCloud();
    const endpoint = other.s3.endpoint;
    await other.stop();
    await expect(fetch(endpoint)).rejects.toThrow();
  });
});

describe("S3 server with SigV4, through aws4fetch", () => {
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let client: AwsClient;
  const bucket = "outputs";
  beforeAll(async () => {
    s3 = await startS3Server({ host: "127.0.0.1", directory: `/tmp/s3-test-${process.pid}`, bucket });
    client = new AwsClient({ accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, service: "s3", region: "auto" });
  });
  afterAll(() => s3.stop());

  const storage = () =>
    createStorage({ S3_ENDPOINT: s3.endpoint, S3_REGION: "auto", S3_BUCKET: bucket, S3_ACCESS_KEY_ID: s3.accessKeyId, S3_SECRET_ACCESS_KEY: s3.secretAccessKey } as never);

  it("signed PUT and GET work; unsigned and wrongly signed requests are refused", async () => {
    const url = `${s3.endpoint}/${bucket}/a/b.txt`;
    expect((await client.fetch(url, { method: "PUT", body: "content" })).status).toBe(200);
    expect(await (await client.fetch(url)).text()).toBe("content");
    expect((await fetch(url)).status).toBe(403);
    const wrong = new AwsClient({ accessKeyId: s3.accessKeyId, secretAccessKey: "not-the-secret", service: "s3", region: "auto" });
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

  it("exists() tells present from removed objects", async () => {
    await client.fetch(`${s3.endpoint}/${bucket}/gone.txt`, { method: "PUT", body: "x" });
    expect(await storage().exists("gone.txt")).toBe(true);
    await client.fetch(`${s3.endpoint}/${bucket}/gone.txt`, { method: "DELETE" });
    expect(await storage().exists("gone.txt")).toBe(false);
  });
});
