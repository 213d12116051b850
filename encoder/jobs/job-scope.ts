import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The job a piece of code is running for. Everything a job starts (requests, sockets, timers,
 * child processes, promises) carries its scope, so an error thrown from any of their event
 * handlers, which no try/catch around the job can see, can still be laid at that job's door.
 */
export interface JobScope {
  jobId: string;
  /**
   * Ends the job with `err` as its failure; false when the job had already ended (the error
   * came from something it left behind).
   */
  fail(err: unknown): boolean;
}

const scopes = new AsyncLocalStorage<JobScope>();

export function runInJobScope<T>(scope: JobScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

/** The job whose work is running now, also inside process-level error handlers. */
export function currentJobScope(): JobScope | undefined {
  return scopes.getStore();
}
