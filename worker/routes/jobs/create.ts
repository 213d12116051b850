import type { Hono } from "hono";
import { findPreset, PRESET_IDS, PRESETS } from "../../../domain/presets/catalogue";
import { PLAN_DISPLAY_NAMES, planIncludes } from "../../../domain/plans";
import { iso } from "../../../domain/time";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { createQueuedJob } from "../../lib/create-job";
import { jsonBody } from "../../lib/json-body";
import { requireCaller } from "../../middleware/auth";
import { idempotent } from "../../middleware/idempotency";
import { upgradeMessage } from "../../../domain/presets/view";
import { jobPath } from "./present";
import { createJobBody } from "./schema";

export function registerCreateJob(app: Hono<AppEnv>) {
  app.post("/jobs", requireCaller, jsonBody(createJobBody), idempotent, async (c) => {
    const caller = c.get("caller");
    const body = c.req.valid("json");

    const preset = findPreset(body.preset);
    if (!preset) {
      throw new ApiError(400, {
        error: "Invalid preset",
        message: `Unknown preset '${body.preset}'. See availablePresets or GET /api/v1/presets.`,
        availablePresets: PRESET_IDS,
      });
    }
    if (!planIncludes(caller.plan, preset.requiredPlan)) {
      throw new ApiError(403, {
        error: "PRESET_NOT_ALLOWED",
        code: "PRESET_NOT_ALLOWED",
        message: `The preset '${preset.id}' is not available on the ${PLAN_DISPLAY_NAMES[caller.plan]} plan.`,
        availablePresets: PRESETS.filter((p) => planIncludes(caller.plan, p.requiredPlan)).map((p) => p.id),
        requiredPlan: preset.requiredPlan,
        yourPlan: caller.plan,
        upgradeMessage: upgradeMessage(preset),
      });
    }

    const { job, remainingJobs } = await createQueuedJob(c.get("services"), caller, {
      preset: preset.id,
      inputUrl: body.inputUrl,
      clientMetadata: body.metadata,
    });
    return c.json(
      {
        id: job.id,
        status: job.status,
        preset: job.preset,
        inputUrl: job.inputUrl,
        webhookUrl: caller.webhookUrl,
        createdAt: iso(job.createdAt),
        estimatedProcessingTime: preset.estimatedProcessingTime,
        links: { self: jobPath(job.id), cancel: jobPath(job.id) },
        user: { remainingJobs, plan: PLAN_DISPLAY_NAMES[caller.plan] },
      },
      201,
    );
  });
}
