/** Failures the worker does not retry: the same input would fail the same way. */
export class PermanentJobError extends Error {
  readonly retryable = false;
}

export function durationExceeded(sourceSeconds: number, maxSeconds: number, planName: string): PermanentJobError {
  return new PermanentJobError(
    `DURATION_EXCEEDED: the source is ${sourceSeconds.toFixed(1)} s long; the ${planName} plan allows sources up to ${maxSeconds} s (${maxSeconds / 60} minutes).`,
  );
}

/**
 * What the job's errorMessage says and whether another attempt may help. Errors that carry no
 * `retryable` flag are unexpected: they are retried and reported without internals.
 */
export function describeFailure(err: unknown): { message: string; retryable: boolean } {
  const e = err as { message?: unknown; retryable?: unknown };
  if (typeof e?.retryable === "boolean" && typeof e.message === "string") {
    return { message: e.message, retryable: e.retryable };
  }
  return { message: "Encoding failed because of an internal encoder error.", retryable: true };
}
