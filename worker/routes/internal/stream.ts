import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { jobs } from "../../../drizzle/schema";
import { isUuid } from "../../../domain/ids";
import type { AppEnv } from "../../context";
import { ApiError, logJobError } from "../../errors";
import * as jobStates from "../../lib/job-states";
import { jsonBody } from "../../lib/json-body";
import { recordSegments, segmentRuns } from "../../lib/stream-segments";
import { waitUntilOf } from "../../lib/wait-until";
import { notifyJobPlayable } from "../../lib/webhooks";
import { streamReportBody } from "./schema";
import { verifyEncoder } from "./verify";

/**
 * A streaming output's encoder reports the segments it stored (docs/playback.md#how-a-stream-is-made):
 * the job's own encoder, or a part's, while it holds its claim. The first report carries the
 * layout; the one that completes every rendition's first segment makes the job playable, and its
 * job.playable webhook goes out after the answer. A reporter that no longer holds its claim is
 * answered 409 with the job's status, as a heartbeat is: it stops, and deletes what it stored
 * if the job ended.
 */
export const internalStream = new Hono<AppEnv>().post(
  "/jobs/:id/stream",
  verifyEncoder,
  jsonBody(streamReportBody),
  async (c) => {
    const services = c.get("services");
    const jobId = c.req.param("id");
    if (!isUuid(jobId)) throw ApiError.notFound();
    const { claim, part, layout, listed, segments } = c.req.valid("json");
    const { held } = await recordSegments(services.db, { jobId, claim, part }, segments);
    if (!held) {
      const [job] = await services.db.select({ status: jobs.status }).from(jobs).where(eq(jobs.id, jobId));
      if (!job) throw ApiError.notFound();
      throw ApiError.conflict(`Job is ${job.status}`, { status: job.status });
    }
    if (layout) await jobStates.recordStreamLayout(services.db, jobId, layout);
    const playable = await jobStates.markPlayable(services.db, jobId, new Date());
    if (playable) {
      waitUntilOf(c)(
        notifyJobPlayable(services, playable).catch((err) =>
          logJobError("the job.playable webhook could not be published; the sweep publishes it", jobId, err),
        ),
      );
    }
    const runs = listed
      ? Object.fromEntries(
          [...(await segmentRuns(services.db, jobId))].map(([name, run]) => [name, run.durations.length]),
        )
      : undefined;
    return c.json({ status: "processing" as const, playable: playable !== undefined, ...(runs && { listed: runs }) });
  },
);
