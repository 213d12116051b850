/** Job states and what each allows (spec, States and transitions). */

export const JOB_STATUSES = ["queued", "processing", "completed", "failed", "cancelled"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export function isCancellable(status: JobStatus): boolean {
  return status === "queued" || status === "processing";
}

/** Object key of a job's output under the current storage layout. */
export function outputKeyFor(accountId: string, jobId: string, fileName: string): string {
  return `outputs/${accountId}/${jobId}/${fileName}`;
}

/** Three attempts in all for a job delivery (spec, Limits: worker retries). */
export const JOB_DELIVERY_RETRIES = 2;
/** Service-wide encoding concurrency (spec, Limits: 2 jobs at a time). */
export const ENCODER_PARALLELISM = 2;
