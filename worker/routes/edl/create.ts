import type { Hono } from "hono";
import { postStats, validateEdl } from "../../../domain/edl/validate";
import { EDL_PRESET_ID } from "../../../domain/presets/catalogue";
import { PLAN_DISPLAY_NAMES } from "../../../domain/plans";
import { iso } from "../../../domain/time";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { createQueuedJob } from "../../lib/create-job";
import { jsonBody } from "../../lib/json-body";
import { requireCaller } from "../../middleware/auth";
import { idempotent } from "../../middleware/idempotency";
import { jobPath } from "../jobs/present";
import { createEdlBody } from "./schema";

/** POST /edl: one quota unit however many clips; an invalid timeline takes none. */
export function registerCreateEdl(app: Hono<AppEnv>) {
  app.post("/edl", requireCaller, jsonBody(createEdlBody), idempotent, async (c) => {
    const caller = c.get("caller");
    const body = c.req.valid("json");
    const result = validateEdl(body.edl, caller.plan);
    if (!result.valid || !result.edl) {
      throw new ApiError(400, {
        error: "EDL validation failed",
        message: `The timeline has ${result.errors.length} error(s); PUT /api/v1/edl validates without creating a job.`,
        errors: result.errors,
      });
    }
    const firstClip = result.edl.timeline.tracks.flatMap((t) => (t.type === "video" ? t.clips : []))[0];
    const { job, remainingJobs } = await createQueuedJob(c.get("services"), caller, {
      preset: EDL_PRESET_ID,
      // The job row's inputUrl is the first video clip's source; the whole timeline is in `edl`.
      inputUrl: firstClip.src,
      clientMetadata: body.metadata,
      // The document as sent: the encoder validates it again with the same pure validator.
      edl: body.edl,
    });
    return c.json(
      {
        id: job.id,
        status: job.status,
        type: "edl" as const,
        webhookUrl: caller.webhookUrl,
        createdAt: iso(job.createdAt),
        stats: postStats(result.stats),
        estimate: result.estimate,
        links: { self: jobPath(job.id), cancel: jobPath(job.id) },
        user: { remainingJobs, plan: PLAN_DISPLAY_NAMES[caller.plan] },
        ...(result.warnings.length ? { warnings: result.warnings } : {}),
      },
      201,
    );
  });
}
