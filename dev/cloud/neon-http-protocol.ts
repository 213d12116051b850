import type { IncomingHttpHeaders } from "node:http";
import ipaddr from "ipaddr.js";

/** Neon's proxy refuses request bodies and responses larger than this by default. */
export const NEON_BODY_LIMIT_BYTES = 10 * 1024 * 1024;

/** A refusal Neon's proxy answers before any SQL runs: its status and message. */
export class ProtocolError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export interface Statement {
  query: string;
  params: (string | null)[];
  /** Overrides the `Neon-Array-Mode` header for this statement. */
  arrayMode?: boolean;
}

export type Payload = { kind: "single"; statement: Statement } | { kind: "batch"; statements: Statement[] };

const ISOLATION_LEVELS = {
  ReadUncommitted: "READ UNCOMMITTED",
  ReadCommitted: "READ COMMITTED",
  RepeatableRead: "REPEATABLE READ",
  Serializable: "SERIALIZABLE",
} as const;

type IsolationLevel = keyof typeof ISOLATION_LEVELS;

export interface RequestOptions {
  /** `Neon-Raw-Text-Output: true`: values as Postgres prints them, which the driver always asks for. */
  rawTextOutput: boolean;
  arrayMode: boolean;
  batch: { isolationLevel?: IsolationLevel; readOnly: boolean; deferrable: boolean };
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Like Neon, anything but exactly `true` is false. */
const flag = (headers: IncomingHttpHeaders, name: string) => header(headers, name) === "true";

export function parseRequestOptions(headers: IncomingHttpHeaders): RequestOptions {
  const level = header(headers, "neon-batch-isolation-level");
  if (level !== undefined && !Object.hasOwn(ISOLATION_LEVELS, level))
    throw new ProtocolError("invalid isolation level");
  return {
    rawTextOutput: flag(headers, "neon-raw-text-output"),
    arrayMode: flag(headers, "neon-array-mode"),
    batch: {
      isolationLevel: level as IsolationLevel | undefined,
      readOnly: flag(headers, "neon-batch-read-only"),
      deferrable: flag(headers, "neon-batch-deferrable"),
    },
  };
}

/** The headers Neon echoes on a batch's answer, saying how its transaction ran. */
export function batchResponseHeaders(batch: RequestOptions["batch"]): Record<string, string> {
  const headers: Record<string, string> = {};
  if (batch.readOnly) headers["Neon-Batch-Read-Only"] = "true";
  if (batch.deferrable) headers["Neon-Batch-Deferrable"] = "true";
  if (batch.isolationLevel) headers["Neon-Batch-Isolation-Level"] = batch.isolationLevel;
  return headers;
}

export function beginStatement(batch: RequestOptions["batch"]): string {
  const modes = [
    batch.isolationLevel && `ISOLATION LEVEL ${ISOLATION_LEVELS[batch.isolationLevel]}`,
    batch.readOnly && "READ ONLY",
    batch.deferrable && "DEFERRABLE",
  ].filter(Boolean);
  return ["BEGIN", ...modes].join(" ");
}

/** An element of a Postgres array literal, quoted and escaped the way `pg` does it. */
function arrayElement(value: unknown): string {
  if (value === null) return "NULL";
  if (Array.isArray(value)) return `{${value.map(arrayElement).join(",")}}`;
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/**
 * Parameters arrive as JSON and go to Postgres as text, as Neon converts them: strings as they
 * are, other scalars and objects as their JSON text, arrays as array literals. (The driver has
 * already turned every value into a string or null.)
 */
function paramToText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return arrayElement(value);
  return JSON.stringify(value);
}

function parseStatement(value: unknown): Statement {
  if (typeof value !== "object" || value === null || typeof (value as { query?: unknown }).query !== "string") {
    throw new Error("expected an object with a string `query`");
  }
  const { query, params = [], arrayMode } = value as { query: string; params?: unknown; arrayMode?: unknown };
  if (!Array.isArray(params)) throw new Error("`params` must be an array");
  if (arrayMode !== undefined && typeof arrayMode !== "boolean") throw new Error("`arrayMode` must be a boolean");
  return { query, params: params.map(paramToText), arrayMode };
}

/** `{query, params?, arrayMode?}` runs one statement; `{queries: [...]}` runs them in one transaction. */
export function parsePayload(body: string): Payload {
  try {
    const json: unknown = JSON.parse(body);
    const queries = (json as { queries?: unknown } | null)?.queries;
    if (Array.isArray(queries)) return { kind: "batch", statements: queries.map(parseStatement) };
    return { kind: "single", statement: parseStatement(json) };
  } catch (err) {
    throw new ProtocolError(`could not parse the HTTP request body: ${(err as Error).message}`);
  }
}

export interface Target {
  host: string;
  port: number;
  user: string;
  password?: string;
  database: string;
}

/** Where a connection string points, the IPv6 brackets taken off. */
export const hostAndPort = (url: URL) => ({
  host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
  port: url.port ? Number(url.port) : 5432,
});

/** The database a request names in `Neon-Connection-String`; Neon's messages for what is missing. */
export function parseTarget(connectionString: string | undefined): Target {
  if (!connectionString) throw new ProtocolError("invalid header: neon-connection-string");
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch (err) {
    throw new ProtocolError(`invalid connection string: ${(err as Error).message}`);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") throw new ProtocolError("incorrect scheme");
  const database = decodeURIComponent(url.pathname.slice(1));
  if (!database) throw new ProtocolError("missing database name");
  if (!url.username) throw new ProtocolError("missing username");
  if (!url.hostname) throw new ProtocolError("missing hostname");
  return {
    ...hostAndPort(url),
    user: decodeURIComponent(url.username),
    password: url.password ? decodeURIComponent(url.password) : undefined,
    database,
  };
}

const isLoopbackHost = (host: string) =>
  host === "localhost" || (ipaddr.isValid(host) && ipaddr.process(host).range() === "loopback");

/** A development tool connects to loopback hosts and to the local cloud's own database, nowhere else. */
export const mayConnect = (target: Target, configured?: { host: string; port: number }) =>
  isLoopbackHost(target.host) ||
  (configured !== undefined && target.host === configured.host && target.port === configured.port);

export const targetKey = (t: Target) => JSON.stringify([t.host, t.port, t.user, t.password ?? null, t.database]);
