import type { Services } from "../context";
import { parseEnv, type Env } from "../env";
import { createCache } from "./cache";
import { openDatabase } from "./db";
import { createQueue } from "./queue";
import { createStorage } from "./storage";

let parsed: { raw: unknown; env: Env } | undefined;

/** Validates the bindings once per isolate, then builds one request's (or one cron tick's) clients. */
export function openServices(rawEnv: unknown): { services: Services; close: () => Promise<void> } {
  if (!parsed || parsed.raw !== rawEnv) parsed = { raw: rawEnv, env: parseEnv(rawEnv) };
  const env = parsed.env;
  const { db, close } = openDatabase(env);
  return { services: { env, db, storage: createStorage(env), queue: createQueue(env), cache: createCache(env) }, close };
}
