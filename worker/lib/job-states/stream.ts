/**
 * The jobs table's writes for a streaming output (docs/playback.md), none a change of state: its
 * layout as the encoder reported it, the moment it became playable (with the job.playable
 * webhook put in its outbox, in the same statement), and that webhook taken out once it is sent.
 */
import { and, eq, isNotNull, isNull, sql } from "drizzle-orm";
import { jobs, streamSegments, type Job } from "../../../drizzle/schema";
import type { StreamLayout } from "../../../domain/stream/layout";
import type { Database } from "../../services/db";

/** Records the stream's layout: the first report's stands, as every encoder of the job makes the same one. */
export async function recordStreamLayout(db: Database, jobId: string, layout: StreamLayout): Promise<void> {
  await db
    .update(jobs)
    .set({ stream: layout })
    .where(and(eq(jobs.id, jobId), isNull(jobs.stream), eq(jobs.status, "processing")));
}

/**
 * The job turns playable once every rendition of its layout has its first segment stored (with
 * its codecs), while it is processing or as it completes; once only. Returns the job when this
 * call made it so.
 */
export async function markPlayable(db: Database, jobId: string, now: Date): Promise<Job | undefined> {
  const firstSegments = sql`(select count(distinct ${streamSegments.rendition}) from ${streamSegments}
    where ${streamSegments.jobId} = ${jobs.id} and ${streamSegments.index} = 0 and ${streamSegments.codecs} is not null)`;
  const [job] = await db
    .update(jobs)
    .set({ playableAt: now, playableWebhookPendingSince: now })
    .where(
      and(
        eq(jobs.id, jobId),
        isNull(jobs.playableAt),
        isNotNull(jobs.stream),
        sql`${jobs.status} in ('processing', 'completed')`,
        sql`${firstSegments} = jsonb_array_length(${jobs.stream} -> 'renditions')`,
      ),
    )
    .returning();
  return job;
}

/** Takes the job.playable webhook out of the outbox: QStash has it, or there was none to send. */
export async function playableWebhookSettled(db: Database, jobId: string): Promise<void> {
  await db
    .update(jobs)
    .set({ playableWebhookPendingSince: null })
    .where(and(eq(jobs.id, jobId), isNotNull(jobs.playableWebhookPendingSince)));
}
