import { NeonDbError, neon, neonConfig } from "@neondatabase/serverless";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startLocalCloud } from "../../dev/cloud";
import { NEON_HTTP_APPLICATION_NAME, startNeonHttp, type NeonHttpOptions } from "../../dev/cloud/neon-http";
import { mayConnect } from "../../dev/cloud/neon-http-protocol";
import { workerVars } from "../../dev/worker-vars";
import { createScratchDatabase } from "../support/postgres";

let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
let server: Awaited<ReturnType<typeof startNeonHttp>>;
let direct: pg.Client;

beforeAll(async () => {
  scratch = await createScratchDatabase("neon_http_wire");
  server = await startNeonHttp({ databaseUrl: scratch.url, poolSize: 3 });
  neonConfig.fetchEndpoint = server.endpoint;
  direct = new pg.Client({ connectionString: scratch.url });
  await direct.connect();
  await direct.query("create table ledger (v integer)");
  await direct.query("create type mood as enum ('calm', 'loud')");
});

afterAll(async () => {
  await server?.stop();
  await direct?.end();
  await scratch?.drop();
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => expect.unreachable("expected the query to fail"),
    (err: unknown) => err as NeonDbError,
  );

/** A second stand-in with other settings; the driver points at it while `use` runs. */
async function withStandIn<T>(options: NeonHttpOptions, use: (sql: ReturnType<typeof neon>) => Promise<T>): Promise<T> {
  const other = await startNeonHttp({ databaseUrl: scratch.url, ...options });
  neonConfig.fetchEndpoint = other.endpoint;
  try {
    return await use(neon(scratch.url));
  } finally {
    neonConfig.fetchEndpoint = server.endpoint;
    await other.stop();
  }
}

const standInBackends = async () =>
  (
    await direct.query<{ pid: number; state: string; query: string }>(
      "select pid, state, query from pg_stat_activity where datname = current_database() and application_name = $1",
      [NEON_HTTP_APPLICATION_NAME],
    )
  ).rows;

async function until(condition: () => Promise<boolean>, what: string) {
  await vi.waitFor(async () => expect(await condition(), `waiting for ${what}`).toBe(true), {
    timeout: 20_000,
    interval: 25,
  });
}

/** The protocol as the driver sends it, for what the driver never sends. */
const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(server.endpoint, {
    method: "POST",
    headers: { "Neon-Connection-String": scratch.url, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

describe("connections", () => {
  it("stay warm: consecutive queries run on the same Postgres backend", async () => {
    const sql = neon(scratch.url);
    const pids: number[] = [];
    for (let i = 0; i < 5; i++) pids.push((await sql`select pg_backend_pid() as pid`)[0].pid);
    expect(new Set(pids).size).toBe(1);
  });

  it("a single statement that leaves a transaction open does not hand it to the next request", async () => {
    await withStandIn({ poolSize: 1 }, async (sql) => {
      await sql`begin`;
      await sql`select txid_current()`;
      // Inside the leaked transaction the id taken above would still be assigned.
      expect(await sql`select txid_current_if_assigned() as xid`).toEqual([{ xid: null }]);
    });
  });

  it("a connection Postgres terminates mid-query answers with its error; the stand-in carries on", async () => {
    const sql = neon(scratch.url);
    const running = failure(sql`select pg_sleep(30)`);
    await until(
      async () => (await standInBackends()).some((b) => b.state === "active" && b.query.includes("pg_sleep(30)")),
      "the query to run",
    );
    await direct.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database() and query like '%pg_sleep(30)%'",
      [NEON_HTTP_APPLICATION_NAME],
    );
    expect((await running).code).toBe("57P01");
    expect(await sql`select 1 as ok`).toEqual([{ ok: 1 }]);
  });

  it("idle connections Postgres terminates are replaced, without an error line (as at its shutdown: 57P01)", async () => {
    const sql = neon(scratch.url);
    await sql`select 1`;
    const errorLines = vi.spyOn(console, "error");
    try {
      await direct.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()",
        [NEON_HTTP_APPLICATION_NAME],
      );
      await until(async () => (await standInBackends()).length === 0, "the terminated connections to go");
      // Answered on a new connection: the pool has taken in the ended ones' errors by now.
      expect(await sql`select 2 as ok`).toEqual([{ ok: 2 }]);
      expect(errorLines.mock.calls.map(String).filter((line) => line.includes("idle connection lost"))).toEqual([]);
    } finally {
      errorLines.mockRestore();
    }
  });

  it("a client that hangs up has its query stopped", async () => {
    const controller = new AbortController();
    const sql = neon(scratch.url, { fetchOptions: { signal: controller.signal } });
    const abandoned = failure(sql`select pg_sleep(30) as hung_up`);
    await until(async () => (await standInBackends()).some((b) => b.query.includes("hung_up")), "the query to run");
    controller.abort();
    await abandoned;
    await until(
      async () => !(await standInBackends()).some((b) => b.query.includes("hung_up") && b.state === "active"),
      "the query to stop",
    );
  });
});

describe("limits, as Neon's (10 MiB each way by default)", () => {
  it("a result over the response limit answers 507 and nothing else breaks", async () => {
    await withStandIn({ poolSize: 2, maxResponseBytes: 64 * 1024 }, async (sql) => {
      const single = await failure(sql`select g from generate_series(1, 100000) g`);
      expect(single.message).toMatch(/HTTP status 507.*response is too large \(max is 65536 bytes\)/);
      const batch = await failure(
        sql.transaction([sql`insert into ledger values (1)`, sql`select g from generate_series(1, 100000) g`]),
      );
      expect(batch.message).toMatch(/HTTP status 507/);
      expect((await direct.query("select count(*)::int as n from ledger")).rows[0].n).toBe(0);
      expect(await sql`select count(*)::int as n from generate_series(1, 1000)`).toEqual([{ n: 1000 }]);
      expect((await standInBackends()).length).toBeLessThanOrEqual(2 + 3);
    });
  });

  it("a request body over the limit answers 413", async () => {
    await withStandIn({ maxRequestBytes: 1024 }, async (sql) => {
      const err = await failure(sql`select ${"x".repeat(2000)} as big`);
      expect(err.message).toMatch(/HTTP status 413.*request is too large \(max is 1024 bytes\)/);
      expect(await sql`select ${"x".repeat(100)} as small`).toEqual([{ small: "x".repeat(100) }]);
    });
  });
});

describe("what the stand-in refuses", () => {
  it("connection strings naming a host other than loopback or the local cloud's database", async () => {
    const err = await failure(neon("postgres://postgres@10.0.0.1:5432/db")`select 1`);
    expect(err).toBeInstanceOf(NeonDbError);
    expect(err.message).toMatch(/only connects to loopback hosts/);
    const url = new URL(scratch.url);
    url.hostname = "localhost";
    expect(await neon(url.toString())`select 1 as ok`).toEqual([{ ok: 1 }]);
  });

  it("connects to the local cloud's database even off loopback, and to nothing else there", () => {
    const configured = { host: "db.local.test", port: 5433 };
    const target = (host: string, port: number) => ({ host, port, user: "u", database: "d" });
    expect(mayConnect(target("db.local.test", 5433), configured)).toBe(true);
    expect(mayConnect(target("db.local.test", 5432), configured)).toBe(false);
    expect(mayConnect(target("other.test", 5433), configured)).toBe(false);
    expect(["127.0.0.1", "127.1.2.3", "::1", "localhost"].map((h) => mayConnect(target(h, 5432)))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(["10.0.0.1", "::ffff:10.0.0.1", "0.0.0.0", "example.com"].map((h) => mayConnect(target(h, 5432)))).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it("JWT authentication, which only Neon can check", async () => {
    const err = await failure(neon(scratch.url, { authToken: "a.b.c" })`select 1`);
    expect(err.message).toMatch(/does not support JWT/);
  });

  it("malformed requests, with Neon's status and error body", async () => {
    const noString = await fetch(server.endpoint, { method: "POST", body: JSON.stringify({ query: "select 1" }) });
    expect(noString.status).toBe(400);
    expect(await noString.json()).toMatchObject({
      message: "invalid header: neon-connection-string",
      code: "",
      severity: "",
      detail: null,
    });

    const notJson = await post("{not json");
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).message).toMatch(/^could not parse the HTTP request body/);

    const noQuery = await post({ sql: "select 1" });
    expect(noQuery.status).toBe(400);

    const level = await post({ queries: [] }, { "Neon-Batch-Isolation-Level": "Chaotic" });
    expect({ status: level.status, body: await level.json() }).toMatchObject({
      status: 400,
      body: { message: "invalid isolation level" },
    });

    const scheme = await post({ query: "select 1" }, { "Neon-Connection-String": "mysql://u@127.0.0.1/db" });
    expect((await scheme.json()).message).toBe("incorrect scheme");

    expect((await fetch(server.endpoint)).status).toBe(404);
    expect((await fetch(server.endpoint.replace("/sql", "/other"), { method: "POST", body: "{}" })).status).toBe(404);
  });

  it("a database that does not exist: Postgres's own error, 3D000", async () => {
    const url = new URL(scratch.url);
    url.pathname = "/no_such_database_here";
    const err = await failure(neon(url.toString())`select 1`);
    expect({ code: err.code, message: err.message }).toEqual({
      code: "3D000",
      message: 'database "no_such_database_here" does not exist',
    });
  });
});

describe("the wire format for clients other than the driver", () => {
  it("a Postgres error body carries every field, null where Postgres gave none", async () => {
    const res = await post({ query: "select 1/0" });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body).toMatchObject({
      message: "division by zero",
      code: "22012",
      severity: "ERROR",
      detail: null,
      hint: null,
      constraint: null,
    });
    expect(Object.keys(body).sort()).toEqual(
      [
        "message",
        "code",
        "detail",
        "hint",
        "position",
        "internalPosition",
        "internalQuery",
        "severity",
        "where",
        "table",
        "column",
        "schema",
        "dataType",
        "constraint",
        "file",
        "line",
        "routine",
      ].sort(),
    );
  });

  it("without raw text output, values become JSON by type, arrays (even of enums) as lists", async () => {
    const res = await post({
      query: `select true as b, 7::int2 as s, 8 as i, 9::int8 as l, 1.5::float8 as f, 'NaN'::real as nan, 2.50::numeric as n,
        '{"a":[1,"é"]}'::jsonb as j, array[1, null, 3] as ints, array['a', 'b"c', 'NULL', null, ''] as texts,
        '{{1,2},{3,4}}'::int[] as grid, '{}'::text[] as empty, '[0:1]={1,2}'::int[] as bounded,
        array['calm', 'loud']::mood[] as moods, null::text as nothing, $1::text as param`,
      params: [42],
    });
    expect(await res.json()).toMatchObject({
      command: "SELECT",
      rowCount: 1,
      rowAsArray: false,
      rows: [
        {
          b: true,
          s: 7,
          i: 8,
          l: "9",
          f: 1.5,
          nan: "NaN",
          n: "2.50",
          j: { a: [1, "é"] },
          ints: [1, null, 3],
          texts: ["a", 'b"c', "NULL", null, ""],
          grid: [
            [1, 2],
            [3, 4],
          ],
          empty: [],
          bounded: [1, 2],
          moods: ["calm", "loud"],
          nothing: null,
          param: "42",
        },
      ],
    });
  });

  it("a batch answers {results} and echoes the transaction settings in its headers; arrayMode per statement", async () => {
    const res = await post(
      {
        queries: [
          { query: "select 1 as a" },
          { query: "select $1::text[] as t", params: [["x", "y z"]], arrayMode: true },
        ],
      },
      {
        "Neon-Batch-Isolation-Level": "RepeatableRead",
        "Neon-Batch-Read-Only": "true",
        "Neon-Raw-Text-Output": "true",
      },
    );
    expect(res.headers.get("neon-batch-isolation-level")).toBe("RepeatableRead");
    expect(res.headers.get("neon-batch-read-only")).toBe("true");
    const { results } = await res.json();
    expect(results.map((r: { rows: unknown }) => r.rows)).toEqual([[{ a: "1" }], [['{x,"y z"}']]]);
  });
});

describe("startLocalCloud", () => {
  it("exposes the stand-in as neonHttp, over its database, and passes it to the Worker as NEON_HTTP_ENDPOINT", async () => {
    const cloud = await startLocalCloud({ databaseUrl: scratch.url });
    try {
      expect(
        workerVars(cloud, { publicUrl: "http://127.0.0.1:1", encoderUrl: "http://127.0.0.1:2" }, "x".repeat(16))
          .NEON_HTTP_ENDPOINT,
      ).toBe(cloud.neonHttp);
      neonConfig.fetchEndpoint = cloud.neonHttp;
      expect(await neon(cloud.databaseUrl)`select current_database() as db`).toEqual([
        { db: new URL(scratch.url).pathname.slice(1) },
      ]);
    } finally {
      neonConfig.fetchEndpoint = server.endpoint;
      await cloud.stop();
    }
    await expect(fetch(cloud.neonHttp, { method: "POST" })).rejects.toThrow();
  });

  it("without a database given, serves the local cloud's own embedded one: queries and atomic batches", async () => {
    const cloud = await startLocalCloud();
    try {
      neonConfig.fetchEndpoint = cloud.neonHttp;
      const sql = neon(cloud.databaseUrl);
      expect(await sql`select ${"é"}::text as s, ${{ a: [1] }}::jsonb as j`).toEqual([{ s: "é", j: { a: [1] } }]);
      await sql`create table t (n int)`;
      expect((await failure(sql.transaction([sql`insert into t values (1)`, sql`selec`]))).code).toBe("42601");
      expect(await sql.transaction([sql`insert into t values (2)`, sql`select array_agg(n) as ns from t`])).toEqual([
        [],
        [{ ns: [2] }],
      ]);
    } finally {
      neonConfig.fetchEndpoint = server.endpoint;
      await cloud.stop();
    }
  });
});
