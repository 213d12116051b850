import { NotPlayableError, VepError, WaitTimeoutError } from "./errors";
import { type Job, TERMINAL_STATUSES } from "./types";

export interface WaitOptions {
  /** Between reads; the service advises 10–15 s. Default 10 s. */
  intervalMs?: number;
  /** Aborting it stops the wait at once, a read under way included; the wait rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Called with every read, finished or not; `job.progress` runs from 0 to 1 while processing. */
  onProgress?: (job: Job) => void;
  /** Consecutive retryable failures (5xx, network) tolerated before giving up. Default 5. */
  maxRetries?: number;
  /**
   * The whole wait's limit, reads and pauses together: past it the wait rejects with a
   * WaitTimeoutError (the job goes on). Default: none. Each read also has the client's `timeoutMs`.
   */
  timeoutMs?: number;
}

/** A job whose stream can be watched: its `playbackUrl` is set. */
export type PlayableJob = Job & { playbackUrl: string };

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

/** A read of the job, given up when `signal` aborts. */
export type ReadJob = (signal: AbortSignal | undefined) => Promise<Job>;

/** What a wait waits for: the read that ends it, and how a WaitTimeoutError names it. */
interface Goal {
  reached: (job: Job) => boolean;
  /** "finish", "turn playable": what the job did not do in time. */
  verb: string;
}

const FINISHED: Goal = { reached: (job) => TERMINAL_STATUSES.includes(job.status), verb: "finish" };

const isPlayable = (job: Job): job is PlayableJob => job.playbackUrl !== null;

/** A playback link, or an end that will never bring one. */
const PLAYABLE: Goal = {
  reached: (job) => isPlayable(job) || TERMINAL_STATUSES.includes(job.status),
  verb: "turn playable",
};

function deadlineOf(timeoutMs: number | undefined): AbortSignal | undefined {
  if (timeoutMs === undefined) return undefined;
  if (!Number.isFinite(timeoutMs) || timeoutMs < 0)
    throw new TypeError(`timeoutMs must be a number of milliseconds, 0 or more: ${timeoutMs}`);
  return AbortSignal.timeout(timeoutMs);
}

/**
 * Reads the job until `goal` is reached, and returns that read. Retryable failures are retried
 * with exponential backoff (1 s, 2 s, 4 s… never longer than the interval); anything else, or
 * too many in a row, is thrown.
 */
export async function pollJob(jobId: string, read: ReadJob, options: WaitOptions = {}, goal = FINISHED): Promise<Job> {
  const { intervalMs = DEFAULT_POLL_INTERVAL_MS, signal: caller, onProgress, maxRetries = 5, timeoutMs } = options;
  const deadline = deadlineOf(timeoutMs);
  const signal = deadline && caller ? AbortSignal.any([caller, deadline]) : (deadline ?? caller);
  let failures = 0;
  let last: Job | undefined;
  try {
    for (;;) {
      signal?.throwIfAborted();
      let job: Job;
      try {
        job = await read(signal);
        failures = 0;
      } catch (err) {
        if (!(err instanceof VepError) || !err.retryable || ++failures > maxRetries) throw err;
        await sleep(Math.min(intervalMs, 1000 * 2 ** (failures - 1)), signal);
        continue;
      }
      last = job;
      onProgress?.(job);
      if (goal.reached(job)) return job;
      await sleep(intervalMs, signal);
    }
  } catch (err) {
    // The caller's own abort keeps its reason; only the deadline's is this wait's timeout.
    if (deadline?.aborted && !caller?.aborted && timeoutMs !== undefined)
      throw new WaitTimeoutError(jobId, goal.verb, timeoutMs, last);
    throw err;
  }
}

/** Reads the job until its playback link is given (docs/playback.md), or it ends without one (a NotPlayableError). */
export async function pollUntilPlayable(jobId: string, read: ReadJob, options: WaitOptions = {}): Promise<PlayableJob> {
  const job = await pollJob(jobId, read, options, PLAYABLE);
  if (!isPlayable(job)) throw new NotPlayableError(job);
  return job;
}
