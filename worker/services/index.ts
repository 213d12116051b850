import type { Services } from "../context";
import { parseEnv, type Env } from "../env";
import { createCache } from "./cache";
import { openDatabase } from "./db";
import { createQueue } from "./queue";
import { createStorage } from "./storage";

let parsed: { raw: unknown; env: Env } | undefined;

/**
 * Validates the bindings once per isolate, then gives one request (or one cron tick) its
 * clients, each made when first used: most requests need two of the four. None holds a
 * connection (each speaks HTTP), so there is nothing to close.
 */
export function openServices(rawEnv: unknown): Services {
  if (!parsed || parsed.raw !== rawEnv) parsed = { raw: rawEnv, env: parseEnv(rawEnv) };
  const env = parsed.env;
  let db: Services["db"] | undefined;
  let storage: Services["storage"] | undefined;
  let queue: Services["queue"] | undefined;
  let cache: Services["cache"] | undefined;
  return {
    env,
    get db() {
      return (db ??= openDatabase(env));
    },
    get storage() {
      return (storage ??= createStorage(env));
    },
    get queue() {
      return (queue ??= createQueue(env));
    },
    get cache() {
      return (cache ??= createCache(env));
    },
  };
}
