import { routeUrl } from "./urls";

/** Job states and what each allows (docs/contract.md §4). */

export const JOB_STATUSES = ["queued", "processing", "completed", "failed", "cancelled"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** The states a cancel can end (the state table's `cancel` move starts from exactly these). */
export const CANCELLABLE_STATUSES = ["queued", "processing"] as const satisfies readonly JobStatus[];

export function isCancellable(status: JobStatus): boolean {
  return (CANCELLABLE_STATUSES as readonly JobStatus[]).includes(status);
}

/** Object key of a job's output under the current storage layout. */
export function outputKeyFor(accountId: string, jobId: string, fileName: string): string {
  return `outputs/${accountId}/${jobId}/${fileName}`;
}

/** Three attempts in all for a job delivery (docs/contract.md §9.1: encoder retries). */
export const JOB_DELIVERY_RETRIES = 2;
/** Service-wide encoding concurrency (docs/contract.md §9.1: 2 jobs at a time). */
export const ENCODER_PARALLELISM = 2;

/** The encoder's route for job deliveries, under its public base URL. */
export const ENCODER_DELIVERY_PATH = "/deliveries/jobs";

/**
 * Where QStash delivers a job: the Worker publishes to it (its ENCODER_URL) and the encoder checks
 * that a delivery's signature names it (its PUBLIC_URL).
 */
export const encoderDeliveryUrl = (base: string) => routeUrl(base, ENCODER_DELIVERY_PATH);
