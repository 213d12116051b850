import type { AdminConnections } from "./commands";
import type { DevState } from "../state";

/** What `npm run admin` found of `npm run dev` (readDevState). */
export interface FoundDev {
  state: DevState;
  writtenAt: Date;
  running: boolean;
}

/**
 * The stores admin works on: DATABASE_URL (Redis: UPSTASH_REDIS_REST_URL and _TOKEN), or else
 * the running `npm run dev`'s. That run's Redis goes only with its own database, and only while
 * it runs: a stale state names a stand-in that is gone, and another database has another cache.
 */
export function adminConnections(
  env: NodeJS.ProcessEnv,
  dev: FoundDev | null,
): Omit<AdminConnections, "quotaLimits"> | { problem: string } {
  const live = dev?.running ? dev.state : undefined;
  const databaseUrl = env.DATABASE_URL || live?.databaseUrl;
  if (!databaseUrl) {
    if (dev)
      return {
        problem: `npm run dev is not running (its last state is from ${dev.writtenAt.toISOString()}): start it, or set DATABASE_URL.`,
      };
    return {
      problem:
        "No database: set DATABASE_URL, or start `npm run dev` first (with the same DATA_DIR as this command, if it has one).",
    };
  }
  const redis = env.UPSTASH_REDIS_REST_URL
    ? { url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN ?? "" }
    : live?.databaseUrl === databaseUrl
      ? live.redis
      : undefined;
  return { databaseUrl, redis };
}

/**
 * An error on one line, its causes after it ("Failed query: select … : connect ECONNREFUSED …"):
 * the cause is often the whole story. Only each first line: a failed query's next names its
 * parameters, which may be a key's hash or a webhook secret.
 */
export function describeError(err: unknown): string {
  const lines: string[] = [];
  for (let e = err; e !== undefined && e !== null && lines.length < 5; e = (e as { cause?: unknown }).cause)
    lines.push(firstLine(e));
  return lines.filter(Boolean).join(": ");
}

function firstLine(e: unknown): string {
  // Node's connection errors to a name with several addresses: an AggregateError with no message of its own.
  if (e instanceof AggregateError && !e.message) return e.errors.map(firstLine).join("; ");
  return (e instanceof Error ? e.message : String(e)).split("\n")[0];
}
