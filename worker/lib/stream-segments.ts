/**
 * A streaming output's segments as its encoders store them (docs/playback.md): recorded by the
 * encoder that holds the job (or the part that made them), and read back as each rendition's
 * unbroken run from segment 0, which its playlist lists.
 */
import { asc, eq, sql } from "drizzle-orm";
import { jobParts, jobs, streamSegments } from "../../drizzle/schema";
import type { Database } from "../services/db";

export interface ReportedSegment {
  rendition: string;
  index: number;
  duration: number;
  start?: number;
  codecs?: string;
}

/** Who reports: the job's own claim (a stream made by one encode), or a part's. */
export interface SegmentReporter {
  jobId: string;
  claim: number;
  part?: number;
}

/**
 * Records segments, each once (a segment listed is never changed: one reported again, by a part
 * made again elsewhere, is left as it was), if the reporter still holds its job or part. Returns
 * whether it did, and how many segments were new.
 */
export async function recordSegments(
  db: Database,
  reporter: SegmentReporter,
  segments: readonly ReportedSegment[],
): Promise<{ held: boolean; recorded: number }> {
  const { jobId, claim, part } = reporter;
  const holds =
    part === undefined
      ? sql`select ${jobs.id} from ${jobs} where ${jobs.id} = ${jobId} and ${jobs.status} = 'processing' and ${jobs.lease} = ${claim}`
      : sql`select ${jobs.id} from ${jobs} join ${jobParts} on ${jobParts.jobId} = ${jobs.id}
          where ${jobs.id} = ${jobId} and ${jobs.status} = 'processing' and ${jobParts.index} = ${part}
            and ${jobParts.state} = 'processing' and ${jobParts.lease} = ${claim}`;
  const given = JSON.stringify(segments);
  const { rows } = await db.execute<{ held: number; recorded: number }>(sql`
    with holder as (${holds}),
    inserted as (
      insert into ${streamSegments} (job_id, rendition, index, duration, start, codecs)
      select ${jobId}, r.rendition, r.index, r.duration, r.start, r.codecs
      from jsonb_to_recordset(${given}::jsonb) as r(rendition text, index int, duration float8, start float8, codecs text), holder
      on conflict do nothing
      returning 1
    )
    select (select count(*) from holder)::int as held, (select count(*) from inserted)::int as recorded`);
  const [row] = rows;
  return { held: (row?.held ?? 0) > 0, recorded: row?.recorded ?? 0 };
}

export interface RenditionRun {
  codecs: string | null;
  /** The first segment's start on the stream's clock (fMP4), when it was reported. */
  start: number | null;
  /** Segment lengths from segment 0, up to the first one missing. */
  durations: number[];
}

/** Each rendition's unbroken run of segments from 0, by name; a rendition with no segment 0 is absent. */
export async function segmentRuns(db: Database, jobId: string): Promise<Map<string, RenditionRun>> {
  const stored = await db
    .select({
      rendition: streamSegments.rendition,
      index: streamSegments.index,
      duration: streamSegments.duration,
      start: streamSegments.start,
      codecs: streamSegments.codecs,
    })
    .from(streamSegments)
    .where(eq(streamSegments.jobId, jobId))
    .orderBy(asc(streamSegments.rendition), asc(streamSegments.index));
  const runs = new Map<string, RenditionRun>();
  for (const segment of stored) {
    const run = runs.get(segment.rendition);
    if (!run) {
      if (segment.index === 0)
        runs.set(segment.rendition, { codecs: segment.codecs, start: segment.start, durations: [segment.duration] });
      continue;
    }
    if (segment.index === run.durations.length) run.durations.push(segment.duration);
  }
  return runs;
}
