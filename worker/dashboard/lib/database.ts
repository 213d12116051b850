import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import type * as schema from "../../../drizzle/schema";

/**
 * Either driver's database: the Worker's Neon pool or the admin CLI's node-postgres pool. The
 * account, user and key operations below run on both, so operators and users share one path.
 */
export type AnyDatabase = PgDatabase<PgQueryResultHKT, typeof schema>;
