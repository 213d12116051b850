import { neon, neonConfig, type NeonQueryFunction } from "@neondatabase/serverless";
import { fillPlaceholders, type Query, type SQL } from "drizzle-orm";
import { drizzle, type NeonHttpDatabase } from "drizzle-orm/neon-http";
import { PgDialect, type PgDatabase, type PgQueryResultHKT } from "drizzle-orm/pg-core";
import * as schema from "../../drizzle/schema";
import type { Env } from "../env";
import { measured } from "./timing";

/** drizzle over the Neon driver, which stays reachable as `$client` for a statement rendered ahead (renderedPerShape below). */
export type Database = NeonHttpDatabase<typeof schema> & { $client: NeonQueryFunction<false, false> };

/**
 * Either driver's database: the Worker's Neon pool or the admin CLI's node-postgres pool. The
 * account, user and key operations (dashboard/lib/) run on both, so operators and users share one path.
 */
export type AnyDatabase = PgDatabase<PgQueryResultHKT, typeof schema>;

neonConfig.fetchFunction = (input: RequestInfo, init?: RequestInit) => measured("db", () => fetch(input, init));

/**
 * Neon over HTTP: each query, or each batch of statements (`db.batch`, one transaction), is one
 * HTTPS request, with no connection to open per request. Nothing in the Worker needs an
 * interactive transaction: writes that must be atomic are single statements or batches (see
 * docs/deploying.md, "The database"). Locally NEON_HTTP_ENDPOINT points the driver at the local
 * cloud's stand-in for Neon's endpoint; in production it is unset and the driver derives
 * Neon's endpoint from the connection string's host.
 */
export function openDatabase(env: Pick<Env, "DATABASE_URL" | "NEON_HTTP_ENDPOINT">): Database {
  pointDriverAt(env);
  return drizzle({ client: neon(env.DATABASE_URL), schema });
}

/**
 * The driver's endpoint setting is global: set before every use of a database (services/index.ts
 * does, on each request that reads one), so one isolate never keeps another environment's.
 */
export function pointDriverAt(env: Pick<Env, "NEON_HTTP_ENDPOINT">) {
  neonConfig.fetchEndpoint = env.NEON_HTTP_ENDPOINT ?? neonConfig.defaults.fetchEndpoint;
}

/**
 * A query built once per database client and run with new parameters each time (drizzle's
 * prepared queries: the SQL text is kept, only the placeholders are filled). Building a select
 * walks every column and condition, which on the hot reads cost more CPU than anything else
 * of the Worker's own. The database still plans and runs it afresh; nothing read is kept.
 */
export function preparedPerDatabase<T>(build: (db: Database) => T): (db: Database) => T {
  const built = new WeakMap<Database, T>();
  return (db) => {
    let query = built.get(db);
    if (query === undefined) {
      query = build(db);
      built.set(db, query);
    }
    return query;
  };
}

const dialect = new PgDialect();

/**
 * preparedPerDatabase for a statement composed with drizzle's `sql` (a CTE, which the query
 * builders cannot prepare): rendered once for each shape `keyOf` names, with `sql.placeholder` for
 * its values, and run with them through the driver exactly as `db.execute` sends a statement
 * (rows as objects, full results), without drizzle walking the statement again on every call.
 * The text holds no database's state, so one rendering serves every database.
 */
export function renderedPerShape<Shape, Row>(keyOf: (shape: Shape) => string, build: (shape: Shape) => SQL) {
  const rendered = new Map<string, Query>();
  return async (db: Database, shape: Shape, values: Record<string, unknown>): Promise<Row[]> => {
    const key = keyOf(shape);
    let query = rendered.get(key);
    if (!query) {
      query = dialect.sqlToQuery(build(shape));
      rendered.set(key, query);
    }
    const { rows } = await db.$client.query(query.sql, fillPlaceholders(query.params, values), {
      arrayMode: false,
      fullResults: true,
    });
    return rows as Row[];
  };
}
