import { z } from "@hono/zod-openapi";
import { COMPLEXITY_LEVELS } from "../../../domain/edl/complexity";
import { EDL_FEATURES } from "../../../domain/edl/validated-edl";
import { jsonObject, storable } from "../../lib/json-body";
import { componentRef, PlanId, Timestamp } from "../../openapi/common";
import { ApiError } from "../../errors";

/**
 * The envelope only: the timeline inside `edl` is judged by domain/edl/validate.ts, so here it is
 * any value, documented as the EDL document.
 */
export const validateEdlBody = z
  .object({
    edl: z
      .unknown()
      .refine((v) => v !== undefined, "Invalid input")
      .openapi(componentRef("EdlDocument")),
  })
  .openapi("ValidateEdlRequest");

export const createEdlBody = validateEdlBody
  .extend({
    metadata: storable(
      jsonObject(
        z.object({
          // null counts as absent, as in every optional field of the API and the timeline.
          name: z.string({ error: "Expected a string" }).nullish(),
          description: z.string({ error: "Expected a string" }).nullish(),
        }),
      ),
    )
      // null is taken as "no metadata", like an absent field, as on POST /jobs.
      .nullish()
      .openapi({
        // jsonObject is a custom schema, so its JSON shape is spelt out here.
        type: ["object", "null"],
        properties: { name: { type: ["string", "null"] }, description: { type: ["string", "null"] } },
        additionalProperties: {},
        description: "Stored with the job and returned on read as `clientMetadata`.",
      }),
  })
  .openapi("CreateEdlRequest");

const Complexity = z.enum(COMPLEXITY_LEVELS).openapi("EdlComplexity");
const Estimate = z
  .object({ processingTime: z.string().openapi({ example: "1-2 minutes" }), complexity: Complexity })
  .openapi("EdlEstimate");
const warnings = z.array(z.string()).openapi({ description: "Left out when there are none." });

export const EdlValidation = z
  .object({
    valid: z.boolean(),
    errors: z
      .array(z.string())
      .optional()
      .openapi({ description: "Left out when empty; each names a rule, a field path and a message, or a plan limit." }),
    warnings: warnings.optional(),
    stats: z.object({
      clips: z.int(),
      duration: z.number().openapi({ description: "Seconds to the end of the last clip." }),
      tracks: z.int(),
      assets: z.int().openapi({ description: "Distinct URLs." }),
      complexity: Complexity,
      features: z.array(z.enum(EDL_FEATURES)).openapi({
        description:
          "Version 1.0: the accepted-but-not-applied properties the timeline uses. Version 1.1: what it applies.",
      }),
    }),
    estimate: Estimate,
    plan: z.object({ current: PlanId, canProcess: z.boolean() }),
  })
  .openapi("EdlValidation");

export const CreatedEdlJob = z
  .object({
    id: z.uuid(),
    status: z.literal("queued"),
    type: z.literal("edl"),
    webhookUrl: z.string().nullable(),
    createdAt: Timestamp,
    stats: z.object({ clips: z.int(), duration: z.number(), tracks: z.int(), complexity: Complexity }),
    estimate: Estimate,
    links: z.object({ self: z.string(), cancel: z.string() }),
    user: z.object({ remainingJobs: z.int().min(0), plan: z.string() }),
    warnings: warnings.optional(),
  })
  .openapi("CreatedEdlJob", {
    description: "Read, cancel and download it through the job operations; its preset is `edl_custom`.",
  });

/** POST /edl's refusal of an invalid timeline. */
export function edlValidationFailed(errors: string[]) {
  return ApiError.edlValidationFailed({
    message: `The timeline has ${errors.length} error(s); PUT /api/v1/edl validates without creating a job.`,
    errors,
  });
}
