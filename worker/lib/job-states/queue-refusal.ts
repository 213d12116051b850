import type { Database } from "../../services/db";
import { move } from "./move";

/**
 * queued → failed when the queue refused the job; its quota unit is returned in the same
 * statement. Its webhook goes in the outbox as every failed job's does: the sweep publishes it
 * once the queue takes messages again.
 */
export function failUnqueued(db: Database, jobId: string, errorMessage: string, now = new Date()) {
  return move(db, "queueRefused", { id: jobId }, { errorMessage, webhookPendingSince: now }, { releaseUnit: true });
}
