import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../context";
import { parseEnv, type Env } from "../env";
import { createCache } from "../services/cache";
import { openDatabase } from "../services/db";
import { createQueue } from "../services/queue";
import { createStorage } from "../services/storage";

let parsed: { raw: unknown; env: Env } | undefined;

/** Validates the bindings once per isolate, then builds the request's clients. */
export const init = createMiddleware<AppEnv>(async (c, next) => {
  if (!parsed || parsed.raw !== c.env) parsed = { raw: c.env, env: parseEnv(c.env) };
  const env = parsed.env;
  const { db, close } = openDatabase(env);
  c.set("services", { env, db, storage: createStorage(env), queue: createQueue(env), cache: createCache(env) });
  try {
    await next();
  } finally {
    const closing = close().catch((err) => console.error("closing the database pool failed", err));
    try {
      c.executionCtx.waitUntil(closing);
    } catch {
      await closing;
    }
  }
});
