import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, inject, it, vi } from "vitest";
import { createApp } from "../../worker/app";
import { workerVars } from "../../dev/worker-vars";

const stack = inject("stack");
const app = createApp();
const goodEnv = workerVars(stack.cloud, { publicUrl: stack.apiUrl, encoderUrl: stack.encoderUrl }, stack.internalSecret);

async function send(env: Record<string, string>, path: string, init: RequestInit = {}) {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`http://api.test${path}`, init), env, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: (await res.json()) as any };
}

async function newKey(): Promise<string> {
  // Accounts are made through the internal admin path of the Node side; here, through SQL over the Neon driver.
  const { Pool, neonConfig } = await import("@neondatabase/serverless");
  neonConfig.wsProxy = (host, port) => `${stack.cloud.neonWsProxy}/v1?address=${host}:${port}`;
  neonConfig.useSecureWebSocket = false;
  neonConfig.pipelineConnect = false;
  const { generateApiKey, hashApiKey } = await import("../../domain/keys");
  const pool = new Pool({ connectionString: stack.databaseUrl });
  const key = generateApiKey();
  const { rows } = await pool.query("insert into accounts (plan) values ('free') returning id");
  await pool.query("insert into api_keys (account_id, hash, last4) values ($1, $2, $3)", [rows[0].id, await hashApiKey(key), key.slice(-4)]);
  await pool.end();
  return key;
}

const json = (key: string, body: unknown): RequestInit => ({
  method: "POST",
  headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
  body: JSON.stringify(body),
});

describe("inside workerd: the deployed app against the local cloud", () => {
  it("creates and reads a job through the Neon driver over WebSocket and signs with aws4fetch", async () => {
    const key = await newKey();
    const created = await send(goodEnv, "/api/v1/jobs", json(key, { inputUrl: "https://a.example/v.mp4", preset: "mp4_264_480p" }));
    expect(created.status).toBe(201);
    const read = await send(goodEnv, `/api/v1/jobs/${created.body.id}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(read.body).toMatchObject({ id: created.body.id, status: "queued", preset: "mp4_264_480p" });
  });

  it("spec: States, row 2: a job the queue refuses is failed and its quota unit released; the client gets a 500 with requestId", async () => {
    const key = await newKey();
    const queueDown = { ...goodEnv, QSTASH_URL: "http://127.0.0.1:9" };
    const refused = await send(queueDown, "/api/v1/jobs", json(key, { inputUrl: "https://a.example/v.mp4", preset: "mp4_264_480p" }));
    expect(refused.status).toBe(500);
    expect(refused.body).toEqual({ error: "Internal server error", message: expect.any(String), requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const failed = await send(goodEnv, "/api/v1/jobs?status=failed", { headers: { Authorization: `Bearer ${key}` } });
    expect(failed.body.jobs).toHaveLength(1);
    expect(failed.body.jobs[0].errorMessage).toMatch(/could not be queued/);
    const next = await send(goodEnv, "/api/v1/jobs", json(key, { inputUrl: "https://a.example/v.mp4", preset: "mp4_264_480p" }));
    expect(next.body.user.remainingJobs).toBe(9);
  });

  it("spec: Errors, 500: an unexpected failure gives Internal server error with a fresh requestId each time", async () => {
    const key = await newKey();
    const dbDown = { ...goodEnv, DATABASE_URL: "postgres://postgres@127.0.0.1:9/none" };
    const a = await send(dbDown, "/api/v1/jobs", { headers: { Authorization: `Bearer ${key}` } });
    const b = await send(dbDown, "/api/v1/jobs", { headers: { Authorization: `Bearer ${key}` } });
    expect(a.status).toBe(500);
    expect(a.body.error).toBe("Internal server error");
    expect(a.body.requestId).not.toBe(b.body.requestId);
  });

  const missingDatabase = new URL(stack.databaseUrl);
  missingDatabase.pathname = "/vep_no_such_database";
  it.each([
    { failure: "a database that does not exist", url: missingDatabase.toString(), cause: { code: "3D000", message: 'database "vep_no_such_database" does not exist' } },
    { failure: "a server that is down", url: "postgres://postgres@127.0.0.1:9/none", cause: { code: "08006", message: expect.stringContaining("connect ECONNREFUSED") } },
  ])("$failure: the log line with the response's requestId carries the driver's cause (code, message)", async ({ url, cause }) => {
    const key = await newKey();
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const res = await send({ ...goodEnv, DATABASE_URL: url }, "/api/v1/jobs", { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: "Internal server error", message: expect.any(String), requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      const lines = logged.mock.calls.map((args) => String(args[0])).filter((line) => line.includes(res.body.requestId));
      expect(lines).toHaveLength(1);
      const entry = JSON.parse(lines[0]);
      expect(entry).toMatchObject({ level: "error", requestId: res.body.requestId, method: "GET", path: "/api/v1/jobs" });
      // drizzle's "Failed query: …" on top, the driver's own error beneath it.
      expect(entry.error.message).toMatch(/^Failed query/);
      expect(entry.error.cause).toMatchObject(cause);
    } finally {
      logged.mockRestore();
    }
  });

  it("a missing binding fails the request as a 500 (its name goes to the log), never a half-configured success", async () => {
    const { DATABASE_URL: _omit, ...missing } = goodEnv;
    const res = await send(missing, "/api/v1/presets");
    expect(res.status).toBe(500);
    expect(res.body.error).toBe("Internal server error");
  });
});
