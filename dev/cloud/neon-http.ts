import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import pg from "pg";
import { close, guarded, listen } from "./listen";
import {
  NEON_BODY_LIMIT_BYTES,
  ProtocolError,
  batchResponseHeaders,
  beginStatement,
  hostAndPort,
  mayConnect,
  parsePayload,
  parseRequestOptions,
  parseTarget,
  targetKey,
  type Payload,
  type RequestOptions,
  type Statement,
  type Target,
} from "./neon-http-protocol";
import { errorJson, statementJson, type Cell, type StatementResult } from "./neon-http-results";

export interface NeonHttpOptions {
  host?: string;
  /** The local cloud's database: requests may name its host even when that is not loopback. */
  databaseUrl?: string;
  /** Connections kept per database (and user); requests beyond it wait for one. */
  poolSize?: number;
  /** Waiting longer than this for a connection answers 500. */
  connectionTimeoutMs?: number;
  maxRequestBytes?: number;
  /** Rows beyond this many bytes of JSON answer 507, as Neon does. */
  maxResponseBytes?: number;
}

/** Connections kept per database (and user) unless told otherwise. */
export const NEON_HTTP_POOL_SIZE = 10;

/** How the stand-in's connections show in pg_stat_activity. */
export const NEON_HTTP_APPLICATION_NAME = "local-neon-http";

/** Values exactly as Postgres prints them: the driver applies its own type parsers to them. */
const RAW_TEXT: pg.CustomTypesConfig = { getTypeParser: () => (value: string) => value };

/** The connections to one database (as one user), and what has been learnt about its types. */
interface DatabasePool {
  target: Target;
  pool: pg.Pool;
  /** Array type OID → element type OID (0: not an array), learnt from pg_type as columns appear. */
  elementTypes: Map<number, number>;
}

/** Bytes of rows a request may still be answered with, out of its limit. */
interface ResponseBudget {
  left: number;
  max: number;
}

/** pg keeps the backend's pid from BackendKeyData but does not declare it. */
const backendPid = (client: pg.PoolClient) => (client as pg.PoolClient & { processID: number }).processID;

/**
 * Postgres does not notice a closed socket while a query computes, so a query whose client hung
 * up is cancelled from a connection of its own (never a pooled one, which may all be busy).
 */
async function cancelBackend(target: Target, pid: number) {
  const canceller = new pg.Client({ ...target, application_name: NEON_HTTP_APPLICATION_NAME });
  canceller.on("error", () => undefined);
  try {
    await canceller.connect();
    await canceller.query("select pg_cancel_backend($1)", [pid]);
  } finally {
    await canceller.end().catch(() => undefined);
  }
}

/** A pooled connection, given back once: to the pool when idle, closed when in any doubt. */
class Lease {
  private released = false;
  private broken = false;
  private cancelling = false;
  // pg emits "error" on a checked-out client whose connection drops; unheard, it would end the process.
  private readonly onError = (err: Error) => {
    this.broken = true;
    log("neon-http: connection lost", err);
  };

  constructor(
    readonly client: pg.PoolClient,
    private readonly target: Target,
  ) {
    client.on("error", this.onError);
  }

  /** Cancels the running query and closes the connection; until then nobody else may use it. */
  hangUp() {
    if (this.released || this.cancelling) return;
    this.cancelling = true;
    cancelBackend(this.target, backendPid(this.client))
      .catch((err) => log("neon-http: could not cancel a query", err))
      .finally(() => {
        this.cancelling = false;
        this.release(true);
      });
  }

  release(discard = false) {
    if (this.released || this.cancelling) return;
    this.released = true;
    this.client.removeListener("error", this.onError);
    // As Neon's pool does, only a connection idle outside any transaction is reused.
    this.client.release(discard || this.broken || this.client.getTransactionStatus() !== "I");
  }
}

const log = (msg: string, err: unknown) =>
  console.error(JSON.stringify({ level: "error", msg, error: err instanceof Error ? err.message : String(err) }));

async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  // The whole body is read even when too large, so the client gets the 413 rather than a reset.
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  if (size > limit) throw new ProtocolError(`request is too large (max is ${limit} bytes)`, 413);
  return Buffer.concat(chunks).toString("utf8");
}

/** Statements each connection keeps prepared; texts beyond these are parsed and planned every time. */
export const PREPARED_PER_CONNECTION = 200;

const preparedNames = new WeakMap<pg.PoolClient, Map<string, string>>();

/**
 * The name a statement's text is kept prepared under on this connection: Postgres then parses
 * it once per connection, and plans it afresh only until its generic plan is as good (its plan
 * cache's rule), where an unnamed statement is parsed and planned on every request. The hot
 * queries of a Worker are few texts with new parameters each time, so this takes the planning
 * out of most of Postgres's work per request. The texts come from the clients, so a connection
 * names only its first PREPARED_PER_CONNECTION; the rest run unnamed.
 */
function preparedName(client: pg.PoolClient, text: string): string | undefined {
  let names = preparedNames.get(client);
  if (!names) {
    names = new Map();
    preparedNames.set(client, names);
  }
  let name = names.get(text);
  if (name === undefined && names.size < PREPARED_PER_CONNECTION) {
    name = `neon_http_${names.size}`;
    names.set(text, name);
  }
  return name;
}

/** Postgres refuses a prepared statement whose result columns changed under it (a table altered since). */
const isStalePreparedStatement = (err: unknown) =>
  err instanceof pg.DatabaseError && err.code === "0A000" && /cached plan/.test(err.message);

/** A connection Postgres ended itself (57P01): its shutdown, or pg_terminate_backend. */
const isEndedByServer = (err: unknown) => err instanceof pg.DatabaseError && err.code === "57P01";

/** Runs one statement over the extended protocol, as Neon does (one statement, text parameters). */
function runStatement(client: pg.PoolClient, statement: Statement, budget: ResponseBudget): Promise<StatementResult> {
  return new Promise((resolve, reject) => {
    const rows: Cell[][] = [];
    let tooLarge = false;
    const config: pg.QueryArrayConfig & { queryMode: "extended" } = {
      name: preparedName(client, statement.query),
      text: statement.query,
      values: statement.params,
      rowMode: "array",
      types: RAW_TEXT,
      queryMode: "extended",
    };
    // Listening to "row" stops pg from keeping its own copy of every row.
    const query = new pg.Query(config);
    query.on("row", (row: Cell[]) => {
      if (tooLarge) return;
      budget.left -= Buffer.byteLength(JSON.stringify(row)) + 1;
      if (budget.left < 0) {
        tooLarge = true;
        reject(new ProtocolError(`response is too large (max is ${budget.max} bytes)`, 507));
        return;
      }
      rows.push(row);
    });
    query.on("error", reject);
    query.on("end", (result: pg.QueryResult) =>
      resolve({ fields: result.fields, rows, command: result.command ?? "", rowCount: result.rowCount }),
    );
    client.query(query);
  });
}

/** Learns which of these column types are arrays (and of what), for JSON output by type. */
async function learnElementTypes(client: pg.PoolClient, known: Map<number, number>, results: StatementResult[]) {
  const unknown = [...new Set(results.flatMap((r) => r.fields.map((f) => f.dataTypeID)))].filter(
    (oid) => !known.has(oid),
  );
  if (unknown.length === 0) return;
  const { rows } = await client.query<{ oid: number; elem: number }>(
    "select oid::int4 as oid, typelem::int4 as elem from pg_type where oid = any($1::int4[]) and typcategory = 'A'",
    [unknown],
  );
  for (const oid of unknown) known.set(oid, rows.find((r) => r.oid === oid)?.elem ?? 0);
}

async function runBatch(
  client: pg.PoolClient,
  statements: Statement[],
  options: RequestOptions,
  budget: ResponseBudget,
) {
  await client.query(beginStatement(options.batch));
  const results: StatementResult[] = [];
  try {
    for (const statement of statements) results.push(await runStatement(client, statement, budget));
  } catch (err) {
    // A statement Postgres refused leaves the connection usable once rolled back; anything else
    // (a response too large, a broken connection) discards it, which rolls back too.
    if (err instanceof pg.DatabaseError) await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
  await client.query("COMMIT");
  return results;
}

function errorResponse(err: unknown): { status: number; body: string } {
  if (err instanceof ProtocolError) return { status: err.status, body: errorJson(err.message) };
  if (err instanceof pg.DatabaseError) return { status: 400, body: errorJson(err.message, err) };
  log("neon-http: request failed", err);
  return { status: 500, body: errorJson(err instanceof Error ? err.message : String(err)) };
}

/**
 * Neon's SQL-over-HTTP endpoint (`POST /sql`, what `neon()` and drizzle's `neon-http` call) in
 * front of a plain PostgreSQL, over a warm `pg` pool per database. The driver reaches it through
 * `neonConfig.fetchEndpoint`. A development tool: it only connects to loopback hosts and to the
 * database it was given.
 */
export async function startNeonHttp(opts: NeonHttpOptions = {}) {
  const host = opts.host ?? "127.0.0.1";
  const poolSize = opts.poolSize ?? NEON_HTTP_POOL_SIZE;
  const maxRequestBytes = opts.maxRequestBytes ?? NEON_BODY_LIMIT_BYTES;
  const maxResponseBytes = opts.maxResponseBytes ?? NEON_BODY_LIMIT_BYTES;
  const configured = opts.databaseUrl ? hostAndPort(new URL(opts.databaseUrl)) : undefined;
  const pools = new Map<string, DatabasePool>();
  let stopped = false;

  function poolFor(target: Target): DatabasePool {
    if (stopped) throw new ProtocolError("the local Neon stand-in is shutting down", 503);
    if (!mayConnect(target, configured)) {
      throw new ProtocolError(
        `the local Neon stand-in only connects to loopback hosts and the local cloud's database, not ${target.host}`,
      );
    }
    const key = targetKey(target);
    let entry = pools.get(key);
    if (!entry) {
      const pool = new pg.Pool({
        ...target,
        application_name: NEON_HTTP_APPLICATION_NAME,
        max: poolSize,
        idleTimeoutMillis: 5 * 60_000,
        connectionTimeoutMillis: opts.connectionTimeoutMs ?? 30_000,
      });
      // An idle connection can die with its server (a restart, a dropped database); the pool
      // replaces it, and without this listener the error would take the process down. Postgres
      // shutting down ends every idle connection so (57P01): at each Ctrl-C of npm run dev,
      // where the terminal's signal reaches the embedded server too. That says nothing a
      // request would not (one made while it is down fails, and is logged), so it goes unsaid.
      pool.on("error", (err) => {
        if (!isEndedByServer(err)) log("neon-http: idle connection lost", err);
      });
      entry = { target, pool, elementTypes: new Map() };
      pools.set(key, entry);
    }
    return entry;
  }

  async function execute(database: DatabasePool, payload: Payload, options: RequestOptions, signal: AbortSignal) {
    // A stale prepared statement did nothing (a batch is rolled back), and its connection is
    // discarded with all it had prepared: again, until a connection prepares it anew. Each of
    // the pool's connections can hold the stale one once.
    for (let attempt = 0; ; attempt++) {
      try {
        return await executeOnce(database, payload, options, signal);
      } catch (err) {
        if (!isStalePreparedStatement(err) || signal.aborted || attempt >= poolSize) throw err;
      }
    }
  }

  async function executeOnce(database: DatabasePool, payload: Payload, options: RequestOptions, signal: AbortSignal) {
    const lease = new Lease(await database.pool.connect(), database.target);
    if (signal.aborted) {
      lease.release();
      throw new Error("the client went away while waiting for a connection");
    }
    // A client that hangs up stops its query, as Neon cancels it.
    const hangUp = () => lease.hangUp();
    signal.addEventListener("abort", hangUp);
    try {
      const budget: ResponseBudget = { left: maxResponseBytes, max: maxResponseBytes };
      const client = lease.client;
      const results =
        payload.kind === "single"
          ? [await runStatement(client, payload.statement, budget)]
          : await runBatch(client, payload.statements, options, budget);
      if (!options.rawTextOutput) await learnElementTypes(client, database.elementTypes, results);
      lease.release();
      const statements = payload.kind === "single" ? [payload.statement] : payload.statements;
      const json = results.map((result, i) =>
        statementJson(result, {
          arrayMode: statements[i].arrayMode ?? options.arrayMode,
          rawTextOutput: options.rawTextOutput,
          elementTypes: database.elementTypes,
        }),
      );
      return payload.kind === "single" ? json[0] : `{"results":[${json.join(",")}]}`;
    } catch (err) {
      // A statement Postgres refused leaves the connection fine; a FATAL one, a prepared statement
      // gone stale, or anything else, does not.
      lease.release(isStalePreparedStatement(err) || !(err instanceof pg.DatabaseError && err.severity === "ERROR"));
      throw err;
    } finally {
      signal.removeEventListener("abort", hangUp);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const send = (status: number, body: string, headers: Record<string, string> = {}) => {
      if (!res.destroyed) res.writeHead(status, { ...headers, "content-type": "application/json" }).end(body);
    };
    const hangUp = new AbortController();
    res.on("close", () => res.writableFinished || hangUp.abort());
    try {
      if (req.method !== "POST" || req.url?.split("?")[0] !== "/sql") {
        req.resume();
        return send(404, errorJson("not found: the endpoint is POST /sql"));
      }
      const options = parseRequestOptions(req.headers);
      const target = parseTarget(req.headers["neon-connection-string"] as string | undefined);
      if (req.headers.authorization) {
        throw new ProtocolError(
          "the local Neon stand-in does not support JWT authentication (an Authorization header)",
        );
      }
      const payload = parsePayload(await readBody(req, maxRequestBytes));
      const body = await execute(poolFor(target), payload, options, hangUp.signal);
      send(200, body, payload.kind === "batch" ? batchResponseHeaders(options.batch) : {});
    } catch (err) {
      if (hangUp.signal.aborted) return;
      const { status, body } = errorResponse(err);
      send(status, body);
    }
  }

  const server = createServer(guarded("Neon HTTP stand-in", handle));
  const port = await listen(server, host);
  return {
    endpoint: `http://${host}:${port}/sql`,
    stop: async () => {
      stopped = true;
      await close(server);
      await Promise.all([...pools.values()].map(({ pool }) => pool.end()));
      pools.clear();
    },
  };
}
