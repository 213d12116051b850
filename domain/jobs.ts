import { routeUrl } from "./urls";

/** Job states and what each allows (docs/contract.md §4). */

export const JOB_STATUSES = ["queued", "processing", "completed", "failed", "cancelled"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** The states a job ends in: nothing works on it any more. */
export const FINAL_STATUSES: readonly string[] = ["completed", "failed", "cancelled"] satisfies JobStatus[];

/** The states a cancel can end (the state table's `cancel` move starts from exactly these). */
export const CANCELLABLE_STATUSES = ["queued", "processing"] as const satisfies readonly JobStatus[];

export function isCancellable(status: JobStatus): boolean {
  return (CANCELLABLE_STATUSES as readonly JobStatus[]).includes(status);
}

/** Object key of a job's output under the current storage layout. */
export function outputKeyFor(accountId: string, jobId: string, fileName: string): string {
  return `outputs/${accountId}/${jobId}/${fileName}`;
}

const UUID_TEXT = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
/**
 * The keys outputKeyFor makes: ids as Postgres writes them, and one file name of the encoder's
 * (`<preset>.<ext>`, `output.<ext>`), so no `/`, `..` or `%` to lead a key or a URL built on it
 * out of its job's prefix.
 */
const OUTPUT_KEY = new RegExp(`^outputs/(${UUID_TEXT})/(${UUID_TEXT})/([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$`);

/** The account, job and file name of a key outputKeyFor made; null for a key of any other form. */
export function outputKeyParts(key: string): { accountId: string; jobId: string; fileName: string } | null {
  const match = OUTPUT_KEY.exec(key);
  return match ? { accountId: match[1], jobId: match[2], fileName: match[3] } : null;
}

/**
 * Three attempts in all at a job's source (docs/contract.md §9.1: encoder retries): only a
 * failure the encoder reports as the source's (a download or decode failure) spends one.
 */
export const JOB_DELIVERY_RETRIES = 2;
/**
 * Attempts that end without the encoder's report (an encoder that died or stopped answering, a
 * delivery the queue could not make) are ours, not the source's, and are bounded on their own:
 * one more than this fails the job, so a source that crashes every encoder still ends.
 */
export const MAX_INTERRUPTIONS = 3;
/**
 * How long QStash waits before it delivers an encoder's message again (QStash's retry-delay
 * expression, in milliseconds over `retried`, the retries made so far): 2 s, 6 s, 18 s. A
 * delivery that found every Machine busy, or whose encoder died, is tried again within seconds,
 * where QStash's own back-off waits 12 s, 2 min 28 s, then 30 min (docs/deploying.md#the-encoder-pool).
 */
export const DISPATCH_RETRY_DELAY = "2000 * pow(3, retried)";
/** Service-wide encoding concurrency (docs/contract.md §9.1: 2 jobs at a time). */
export const ENCODER_PARALLELISM = 2;

/** The encoder's route for job deliveries, under its public base URL. */
export const ENCODER_DELIVERY_PATH = "/deliveries/jobs";

/**
 * Where QStash delivers a job: the Worker publishes to it (its ENCODER_URL) and the encoder checks
 * that a delivery's signature names it (its PUBLIC_URL).
 */
export const encoderDeliveryUrl = (base: string) => routeUrl(base, ENCODER_DELIVERY_PATH);
