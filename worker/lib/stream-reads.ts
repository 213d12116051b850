/** What serving a job's stream reads of the job (docs/playback.md): one row, by id. */
import { eq, sql } from "drizzle-orm";
import { jobs } from "../../drizzle/schema";
import { isUuid } from "../../domain/ids";
import { preparedPerDatabase, type Database } from "../services/db";

const streamRead = preparedPerDatabase((db) =>
  db
    .select({
      id: jobs.id,
      accountId: jobs.accountId,
      status: jobs.status,
      stream: jobs.stream,
      playableAt: jobs.playableAt,
      startedAt: jobs.startedAt,
    })
    .from(jobs)
    .where(eq(jobs.id, sql.placeholder("id")))
    .prepare("stream_read"),
);

/** The job's stream facts, or undefined for no such job (a malformed id names none). */
export async function streamJob(db: Database, id: string) {
  if (!isUuid(id)) return undefined;
  const [job] = await streamRead(db).execute({ id });
  return job;
}

export type StreamJob = NonNullable<Awaited<ReturnType<typeof streamJob>>>;
