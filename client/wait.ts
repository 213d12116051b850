import { VepError } from "./errors";
import { type Job, TERMINAL_STATUSES } from "./types";

export interface WaitOptions {
  /** Between reads; the service advises 10–15 s. Default 10 s. */
  intervalMs?: number;
  signal?: AbortSignal;
  /** Called with every read, finished or not; `job.progress` runs from 0 to 1 while processing. */
  onProgress?: (job: Job) => void;
  /** Consecutive retryable failures (5xx, network) tolerated before giving up. Default 5. */
  maxRetries?: number;
}

export const DEFAULT_POLL_INTERVAL_MS = 10_000;

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Reads the job until it is completed, failed or cancelled, and returns that read. Retryable
 * failures are retried with exponential backoff (1 s, 2 s, 4 s… never longer than the interval);
 * anything else, or too many in a row, is thrown.
 */
export async function pollJob(read: () => Promise<Job>, options: WaitOptions = {}): Promise<Job> {
  const { intervalMs = DEFAULT_POLL_INTERVAL_MS, signal, onProgress, maxRetries = 5 } = options;
  let failures = 0;
  for (;;) {
    signal?.throwIfAborted();
    let job: Job;
    try {
      job = await read();
      failures = 0;
    } catch (err) {
      if (!(err instanceof VepError) || !err.retryable || ++failures > maxRetries) throw err;
      await sleep(Math.min(intervalMs, 1000 * 2 ** (failures - 1)), signal);
      continue;
    }
    onProgress?.(job);
    if (TERMINAL_STATUSES.includes(job.status)) return job;
    await sleep(intervalMs, signal);
  }
}
