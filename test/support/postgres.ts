import { randomBytes } from "node:crypto";
import pg from "pg";

/** The machine's PostgreSQL (trust auth); every suite run gets a database of its own. */
export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export async function createScratchDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  // Random, not the time: stacks started together in one process (bench:split's three) met in one millisecond.
  const name = `${prefix}_${process.pid}_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      await client.query(`drop database if exists "${name}" with (force)`);
      await client.end();
    },
  };
}
