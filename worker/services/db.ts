import { Pool, neonConfig } from "@neondatabase/serverless";
import { drizzle } from "drizzle-orm/neon-serverless";
import * as schema from "../../drizzle/schema";
import type { Env } from "../env";

export type Database = ReturnType<typeof drizzle<typeof schema>>;

/**
 * A Pool per request over Neon's WebSocket transport: it supports interactive transactions,
 * which quota claiming needs. Locally NEON_WS_PROXY points the same driver at a proxy in front
 * of plain Postgres (the embedded PostgreSQL or the machine's own server).
 */
export function openDatabase(env: Env): { db: Database; close: () => Promise<void> } {
  if (env.NEON_WS_PROXY) {
    const proxy = env.NEON_WS_PROXY;
    neonConfig.wsProxy = (host, port) => `${proxy}/v1?address=${host}:${port}`;
    neonConfig.useSecureWebSocket = false;
    neonConfig.pipelineConnect = false;
  }
  const pool = new Pool({ connectionString: env.DATABASE_URL });
  return { db: drizzle(pool, { schema }), close: () => pool.end() };
}
