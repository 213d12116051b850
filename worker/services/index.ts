import type { Services } from "../context";
import { parseEnv, type Env } from "../env";
import { createCache } from "./cache";
import { openDatabase } from "./db";
import { createQueue } from "./queue";
import { createStorage } from "./storage";

let parsed: { raw: unknown; env: Env } | undefined;

/**
 * Validates the bindings once per isolate, then builds one request's (or one cron tick's)
 * clients. None holds a connection: each is a client over HTTP, so there is nothing to close.
 */
export function openServices(rawEnv: unknown): Services {
  if (!parsed || parsed.raw !== rawEnv) parsed = { raw: rawEnv, env: parseEnv(rawEnv) };
  const env = parsed.env;
  return { env, db: openDatabase(env), storage: createStorage(env), queue: createQueue(env), cache: createCache(env) };
}
