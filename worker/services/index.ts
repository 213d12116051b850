import type { Redis } from "@upstash/redis/cloudflare";
import { parseEnv, type Env } from "../env";
import { createCache } from "./cache";
import { openDatabase, pointDriverAt, type Database } from "./db";
import { createPool } from "./pool";
import { createQueue, type Queue } from "./queue";
import { createStorage, type Storage } from "./storage";

export interface Services {
  env: Env;
  db: Database;
  storage: Storage;
  queue: Queue;
  cache: Redis;
}

/** The clients of one set of bindings, each made when first used. */
interface Clients {
  raw: unknown;
  env: Env;
  db?: Services["db"];
  storage?: Services["storage"];
  queue?: Services["queue"];
  cache?: Services["cache"];
}

let clients: Clients | undefined;

/**
 * Validates the bindings once per isolate and gives every request (or cron tick) the same
 * clients, each made when first used: most requests need two of the four. None holds a
 * connection or anything of a request (each speaks HTTP, and what a request spent on them is
 * tallied through async context, services/timing.ts), so sharing them saves only their
 * construction: drizzle's schema walk, the Redis client's command table, the signing key cache.
 * Nothing read through them is kept.
 */
export function openServices(rawEnv: unknown): Services {
  if (!clients || clients.raw !== rawEnv) clients = { raw: rawEnv, env: parseEnv(rawEnv) };
  const own = clients;
  const { env } = own;
  const cache = () => {
    own.cache ??= createCache(env);
    return own.cache;
  };
  return {
    env,
    get db() {
      pointDriverAt(env);
      own.db ??= openDatabase(env);
      return own.db;
    },
    get storage() {
      own.storage ??= createStorage(env);
      return own.storage;
    },
    get queue() {
      own.queue ??= createQueue(env, createPool(env, cache));
      return own.queue;
    },
    get cache() {
      return cache();
    },
  };
}
