import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../context";
import { openServices } from "../services";

export const init = createMiddleware<AppEnv>(async (c, next) => {
  const { services, close } = openServices(c.env);
  c.set("services", services);
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
