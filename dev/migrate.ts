import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { fileURLToPath } from "node:url";
import { CONNECT_TIMEOUT_MS, Unreachable } from "./cloud/unreachable";

const migrationsFolder = fileURLToPath(new URL("../drizzle/migrations", import.meta.url));

/** Applies drizzle-kit's generated migrations; the same call runs against Neon in production. */
export async function applyMigrations(databaseUrl: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    // Reached first, so that a database that does not answer is told apart from a migration that fails.
    const client = await pool.connect().catch((err) => {
      throw new Unreachable("database", databaseUrl, err);
    });
    client.release();
    await migrate(drizzle(pool), { migrationsFolder });
  } finally {
    await pool.end();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error("DATABASE_URL is required");
    process.exit(1);
  }
  await applyMigrations(url);
  console.error("migrations applied");
}
