import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { startNeonHttp } from "../../dev/cloud/neon-http";
import { applyMigrations } from "../../dev/migrate";
import * as schema from "../../drizzle/schema";
import { openDatabase, type Database } from "../../worker/services/db";
import { createScratchDatabase } from "./postgres";

/**
 * A migrated scratch database of its own, reached two ways: as the Worker reaches it (Neon's
 * driver over HTTP, through the local stand-in for Neon's endpoint), and directly with
 * node-postgres (as the admin CLI does, and for fixtures). Counts in it are exact.
 */
export async function openScratchDatabase(prefix: string) {
  const scratch = await createScratchDatabase(prefix);
  try {
    await applyMigrations(scratch.url);
    const server = await startNeonHttp({ databaseUrl: scratch.url });
    const pool = new pg.Pool({ connectionString: scratch.url, max: 2 });
    const bindings = { DATABASE_URL: scratch.url, NEON_HTTP_ENDPOINT: server.endpoint };
    const db: Database = openDatabase(bindings);
    return {
      db,
      direct: drizzle(pool, { schema }),
      /** The Worker's two database bindings for this database. */
      bindings,
      async close() {
        await server.stop();
        await pool.end();
        await scratch.drop();
      },
    };
  } catch (err) {
    await scratch.drop();
    throw err;
  }
}
