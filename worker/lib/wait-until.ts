import type { Context } from "hono";

/**
 * Hands work that should outlive the response (a webhook publish) to the runtime's waitUntil.
 * Without an execution context (the app called directly, as some tests do) the work simply
 * runs on.
 */
export function waitUntilOf(c: Pick<Context, "executionCtx">) {
  return (work: Promise<unknown>) => {
    try {
      c.executionCtx.waitUntil(work);
    } catch {
      void work;
    }
  };
}
