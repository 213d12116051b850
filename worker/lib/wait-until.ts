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

/**
 * `work`, carried to its end even when the client goes away: the runtime cancels a handler with
 * its request, and a creation stopped between its statement and its publish or its record left a
 * job unannounced, and an Idempotency-Key pending for a day, every retry under it a 409.
 */
export function outlivingTheClient<T>(c: Pick<Context, "executionCtx">, work: Promise<T>): Promise<T> {
  waitUntilOf(c)(work.catch(() => undefined));
  return work;
}
