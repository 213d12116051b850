import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { findPreset } from "../../../domain/presets/catalogue";
import { PLAN_DISPLAY_NAMES } from "../../../domain/plans";
import { iso } from "../../../domain/time";
import type { AppEnv } from "../../context";
import { createQueuedJob } from "../../lib/create-job";
import { jsonBody } from "../../lib/json-body";
import { unknownPreset } from "../../lib/refusals";
import { requireCreator } from "../../middleware/auth";
import { idempotent } from "../../middleware/idempotency";
import { BODY_LIMITS, bodyLimitError } from "../../middleware/body-limit";
import { authenticated, jsonRequest, jsonResponse } from "../../openapi/common";
import {
  authenticatedErrors,
  examples,
  InvalidJsonError,
  InvalidPresetError,
  PresetNotAllowedError,
  quotaErrors,
  ValidationError,
} from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { createdJobExamples, createJobExamples, createJobRefusals, presetNotAllowedExample } from "./examples";
import { jobPath } from "./present";
import { CreatedJob, createdHeaders, createJobBody, idempotencyKeyHeader } from "./schema";

const createJobRoute = createRoute({
  method: "post",
  path: "/jobs",
  tags: ["Jobs"],
  operationId: "createJob",
  summary: "Create an encoding job",
  description:
    "Queues one source URL for encoding with one preset and takes one unit of the monthly quota. The source is not fetched now: an accepted job can still fail later (read its `errorMessage`).",
  security: authenticated,
  middleware: [requireCreator, jsonBody(createJobBody), idempotent] as const,
  request: { headers: idempotencyKeyHeader, body: jsonRequest(createJobBody, createJobExamples) },
  responses: {
    201: { ...jsonResponse("Created, status queued.", CreatedJob, createdJobExamples), headers: createdHeaders },
    400: jsonResponse(
      "Malformed JSON, a body that does not match the schema, or an unknown preset.",
      z.union([InvalidJsonError, ValidationError, InvalidPresetError]),
      {
        ...createJobRefusals,
        unknownPreset: examples.unknownPreset,
        invalidJson: examples.invalidJson,
      },
    ),
    403: jsonResponse("The preset exists but is not in the caller's plan.", PresetNotAllowedError, {
      presetAbovePlan: presetNotAllowedExample,
    }),
    ...quotaErrors,
    ...bodyLimitError(BODY_LIMITS.job),
    ...authenticatedErrors,
  },
});

export function registerCreateJob(app: OpenAPIHono<AppEnv>) {
  operation(app, createJobRoute, async (c) => {
    const body = c.req.valid("json");
    const preset = findPreset(body.preset);
    if (!preset) throw unknownPreset(body.preset);

    const job = await createQueuedJob(c.get("services"), c.get("creator"), {
      preset,
      inputUrl: body.inputUrl,
      clientMetadata: body.metadata,
    });
    const { caller } = job;
    return c.json(
      {
        id: job.id,
        status: "queued" as const,
        preset: preset.id,
        inputUrl: body.inputUrl,
        webhookUrl: caller.webhookUrl,
        createdAt: iso(job.createdAt),
        estimatedProcessingTime: preset.estimatedProcessingTime,
        links: { self: jobPath(job.id), cancel: jobPath(job.id) },
        user: { remainingJobs: job.remainingJobs, plan: PLAN_DISPLAY_NAMES[caller.plan] },
      },
      201,
    );
  });
}
