import { describe, expect, inject, it, vi } from "vitest";
import { workerVars } from "../../dev/worker-vars";
import { signInternal } from "../../domain/internal-auth";
import { bodyOf, expectError, expectStatus } from "../support/api-client";
import { appClient } from "./app-client";

const stack = inject("stack");
const goodEnv = workerVars(
  stack.cloud,
  { publicUrl: stack.apiUrl, encoderUrl: stack.encoderUrl },
  stack.internalSecret,
);

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
  await pool.query("insert into api_keys (account_id, hash, last4) values ($1, $2, $3)", [
    rows[0].id,
    await hashApiKey(key),
    key.slice(-4),
  ]);
  await pool.end();
  return key;
}

const JOB = { inputUrl: "https://a.example/v.mp4", preset: "mp4_264_480p" };

describe("inside workerd: the deployed app against the local cloud", () => {
  it("creates and reads a job through the Neon driver over HTTP and signs with aws4fetch", async () => {
    const api = appClient(goodEnv, await newKey());
    const created = await api.createJob(JOB);
    expectStatus(created, 201);
    const read = await api.getJob(created.body.id);
    expectStatus(read, 200);
    expect(read.body).toMatchObject({ id: created.body.id, status: "queued", preset: "mp4_264_480p" });
  });

  it("contract §4.2 row 2: a job the queue refuses is failed and its quota unit released; the client gets a 500 with requestId", async () => {
    const key = await newKey();
    const queueDown = { ...goodEnv, QSTASH_URL: "http://127.0.0.1:9" };
    const refused = await appClient(queueDown, key).createJob(JOB);
    expectStatus(refused, 500);
    expect(refused.body).toEqual({
      error: "Internal server error",
      message: expect.any(String),
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const failed = await appClient(goodEnv, key).listJobs({ status: "failed" });
    expectStatus(failed, 200);
    expect(failed.body.jobs).toHaveLength(1);
    expect(failed.body.jobs[0].errorMessage).toMatch(/could not be queued/);
    const next = await appClient(goodEnv, key).createJob(JOB);
    expectStatus(next, 201);
    expect(next.body.user.remainingJobs).toBe(9);
  });

  it("contract §8.1 500: an unexpected failure gives Internal server error with a fresh requestId each time", async () => {
    const dbDown = appClient({ ...goodEnv, DATABASE_URL: "postgres://postgres@127.0.0.1:9/none" }, await newKey());
    const a = await dbDown.listJobs();
    const b = await dbDown.listJobs();
    expectError(a, 500, "Internal server error");
    expectStatus(b, 500);
    expect(a.body.requestId).not.toBe(b.body.requestId);
  });

  const missingDatabase = new URL(stack.databaseUrl);
  missingDatabase.pathname = "/vep_no_such_database";
  it.each([
    {
      failure: "a database that does not exist",
      url: missingDatabase.toString(),
      cause: { code: "3D000", message: 'database "vep_no_such_database" does not exist' },
    },
    // Neon's HTTP endpoint answers a database it cannot reach with a 500 and no SQLSTATE (as the stand-in does); the driver's error carries its message.
    {
      failure: "a server that is down",
      url: "postgres://postgres@127.0.0.1:9/none",
      cause: { name: "NeonDbError", message: expect.stringContaining("connect ECONNREFUSED") },
    },
  ])("$failure: the log line with the response's requestId carries the driver's cause", async ({ url, cause }) => {
    const key = await newKey();
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const res = await appClient({ ...goodEnv, DATABASE_URL: url }, key).listJobs();
      expectStatus(res, 500);
      expect(res.body).toEqual({
        error: "Internal server error",
        message: expect.any(String),
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
      const lines = logged.mock.calls
        .map((args) => String(args[0]))
        .filter((line) => line.includes(res.body.requestId));
      expect(lines).toHaveLength(1);
      const entry = JSON.parse(lines[0]);
      expect(entry).toMatchObject({
        level: "error",
        requestId: res.body.requestId,
        method: "GET",
        path: "/api/v1/jobs",
      });
      // drizzle's "Failed query: …" on top, the driver's own error beneath it; the key's hash and
      // the page's numbers, the statement's parameters, are not written.
      expect(entry.error.message).toMatch(/^Failed query: select [\s\S]*\nparams: 3 withheld$/);
      expect(entry.error.cause).toMatchObject(cause);
    } finally {
      logged.mockRestore();
    }
  });

  it("the internal API without its cache refuses a call it cannot check for replay (503) and changes nothing; signed afresh once the cache is back, it is taken", async () => {
    const key = await newKey();
    const job = await appClient(goodEnv, key).createJob(JOB);
    expectStatus(job, 201);
    const claim = async (bindings: Record<string, string>) => {
      const body = JSON.stringify({ dispatch: 0 });
      const path = `/internal/jobs/${job.body.id}/claim`;
      const signed = await signInternal(stack.internalSecret, { method: "POST", path, body });
      return appClient(bindings).raw<{ error: string; message: string }>({
        method: "POST",
        path,
        body,
        headers: { "Content-Type": "application/json", ...signed },
      });
    };
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const refused = await claim({ ...goodEnv, UPSTASH_REDIS_REST_URL: "http://127.0.0.1:9" });
      expectStatus(refused, 503);
      expect(refused.body.error).toBe("Service unavailable");
      expect(logged.mock.calls.some(([line]) => String(line).includes("internal nonce unchecked"))).toBe(true);
    } finally {
      logged.mockRestore();
    }
    const read = await appClient(goodEnv, key).getJob(job.body.id);
    expect(bodyOf(read, 200).status).toBe("queued");
    expectStatus(await claim(goodEnv), 200);
  });

  it("a missing binding fails the request as a 500 (its name goes to the log), never a half-configured success", async () => {
    const { DATABASE_URL: _omit, ...missing } = goodEnv;
    const res = await appClient(missing).listPresets();
    expectError(res, 500, "Internal server error");
  });
});
