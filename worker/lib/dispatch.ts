import type { Job } from "../../drizzle/schema";
import type { Queue } from "../services/queue";

/**
 * The message of a queued job's current dispatch: its join's once its parts are done
 * (docs/scaling.md), its own otherwise. Every step that dispatches a job again (a retry, the
 * sweep, a lost message) publishes through this, so a join is never dispatched as a whole job.
 */
export function publishDispatch(
  queue: Queue,
  job: Pick<Job, "id" | "dispatch" | "stage">,
  options: { delaySeconds?: number } = {},
): Promise<string> {
  return job.stage === "join"
    ? queue.publishJoin(job.id, job.dispatch, options)
    : queue.publishJob(job.id, job.dispatch, options);
}
