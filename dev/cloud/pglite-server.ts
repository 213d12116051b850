import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { freePort } from "./free-port";

/**
 * PGlite served over the Postgres wire protocol, so `pg` and the Neon proxy reach it like any
 * Postgres. Its multiplexer queues queries from several connections onto the one database.
 */
export async function startPgliteServer(opts: { host: string; dataDir: string }) {
  await mkdir(opts.dataDir, { recursive: true });
  const db = await PGlite.create(opts.dataDir);
  const port = await freePort(opts.host);
  const server = new PGLiteSocketServer({ db, host: opts.host, port, maxConnections: 32 });
  await server.start();
  return {
    databaseUrl: `postgres://postgres:postgres@${opts.host}:${port}/postgres`,
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}
