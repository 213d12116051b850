/**
 * The contract's error bodies (spec, Errors) as schemas, and the responses routes share. Handlers
 * throw ApiError with these bodies (`satisfies` the inferred types); the renderer sends them as is.
 */
import { z } from "@hono/zod-openapi";
import { PRESET_IDS } from "../../domain/presets/catalogue";
import { describeSize, payloadTooLarge } from "../middleware/body-limit";
import { jsonResponse, PlanId } from "./common";

const message = z.string().openapi({ description: "Text for a person; clients should read this first." });

export const InvalidJsonError = z
  .object({ error: z.literal("Invalid JSON"), message })
  .openapi("InvalidJsonError", { description: "The body could not be parsed as JSON (whatever its Content-Type)." });

export const ValidationError = z
  .object({
    error: z.literal("Validation error"),
    message: z.literal("Invalid request parameters"),
    details: z.array(
      z.object({
        field: z.string().openapi({ description: 'Dotted path of the field, or "body" for the body as a whole.' }),
        message: z.string().openapi({ description: '"Invalid input": missing; "Invalid input URL": not an absolute http(s) URL.' }),
      }),
    ),
  })
  .openapi("ValidationError", { description: "The body does not match the schema." });

export const InvalidPresetError = z
  .object({
    error: z.literal("Invalid preset"),
    message,
    availablePresets: z.array(z.string()).openapi({ description: "Every preset the service knows, not only the plan's." }),
  })
  .openapi("InvalidPresetError");

export const InvalidOperationError = z
  .object({ error: z.literal("Invalid operation"), message })
  .openapi("InvalidOperationError", { description: "Cancel on a job that is not queued or processing." });

export const EdlValidationFailedError = z
  .object({ error: z.literal("EDL validation failed"), message, errors: z.array(z.string()) })
  .openapi("EdlValidationFailedError");

export const UnauthorizedError = z
  .object({ error: z.literal("Unauthorized"), message })
  .openapi("UnauthorizedError", {
    description: "Missing or malformed header, unrecognised prefix, unknown or revoked key: one body for all five. Not retryable.",
  });

export const PresetNotAllowedError = z
  .object({
    error: z.literal("PRESET_NOT_ALLOWED"),
    code: z.literal("PRESET_NOT_ALLOWED"),
    message: message.openapi({ description: "Names the plan by its display name." }),
    availablePresets: z.array(z.string()).openapi({ description: "The presets the caller's plan includes." }),
    requiredPlan: PlanId,
    yourPlan: PlanId,
    upgradeMessage: z.string(),
  })
  .openapi("PresetNotAllowedError");

export const NotFoundError = z
  .object({ error: z.literal("Not found"), message })
  .openapi("NotFoundError", { description: "The job does not exist or belongs to another account; the two are not told apart." });

export const BareMessageError = z
  .strictObject({ message })
  .openapi("BareMessageError", { description: "GET /jobs/{id}/download-url errors: a message and no `error` field." });

export const UsageLimitError = z
  .object({
    error: z.literal("Usage limit exceeded"),
    message,
    usage: z.object({ current: z.int(), limit: z.int(), plan: z.string().openapi({ description: "Plan display name." }) }),
  })
  .openapi("UsageLimitError", {
    description: "The monthly quota is used up. A quota, not a rate limit: retrying does not help until the month rolls over or the plan changes.",
  });

export const ConflictError = z
  .object({ error: z.literal("Conflict"), message })
  .openapi("ConflictError", { description: "An Idempotency-Key reused with another body, or still in progress." });

export const PayloadTooLargeError = z
  .object({ error: z.literal("Payload too large"), message })
  .openapi("PayloadTooLargeError", { description: "The body is over the operation's size limit; it is refused before it is read whole." });

export const InternalError = z
  .object({ error: z.literal("Internal server error"), message, requestId: z.uuid() })
  .openapi("InternalError", { description: "Unexpected; safe to retry with backoff. `requestId` is fresh for each failure." });

export type InvalidPresetBody = z.infer<typeof InvalidPresetError>;
export type InvalidOperationBody = z.infer<typeof InvalidOperationError>;
export type EdlValidationFailedBody = z.infer<typeof EdlValidationFailedError>;
export type PresetNotAllowedBody = z.infer<typeof PresetNotAllowedError>;

const UNAUTHORIZED_MESSAGE = "Missing or invalid API key. Use the header Authorization: Bearer spk_xxx or Bearer sk_xxx";

export const examples = {
  invalidJson: { summary: "The body is not JSON", value: { error: "Invalid JSON", message: "The request body is not valid JSON" } },
  unauthorized: { summary: "No key, a malformed or unknown key, or a revoked one", value: { error: "Unauthorized", message: UNAUTHORIZED_MESSAGE } },
  notFound: { summary: "No such job for this account", value: { error: "Not found", message: "Job not found" } },
  internal: {
    summary: "An unexpected failure",
    value: {
      error: "Internal server error",
      message: "An unexpected error occurred. Retry with backoff.",
      requestId: "0b4f6a55-3f8e-4a43-9a58-2d1c9e0b7c11",
    },
  },
  usageLimit: {
    summary: "The free plan's ten jobs are used up",
    value: {
      error: "Usage limit exceeded",
      message:
        "You have used all 10 jobs of your Starter plan this month. The quota resets at the start of the next calendar month (UTC), or when the plan changes.",
      usage: { current: 10, limit: 10, plan: "Starter" },
    },
  },
  idempotencyConflict: {
    summary: "The Idempotency-Key was used with another body",
    value: { error: "Conflict", message: "This Idempotency-Key was used with a different request body." },
  },
  unknownPreset: {
    summary: "An unknown preset",
    value: {
      error: "Invalid preset",
      message: "Unknown preset 'mp4_999p'. See availablePresets or GET /api/v1/presets.",
      availablePresets: [...PRESET_IDS],
    },
  },
} as const;

/** Responses every authenticated operation shares. */
export const authenticatedErrors = {
  401: jsonResponse("Authentication failed.", UnauthorizedError, { unauthorized: examples.unauthorized }),
  500: jsonResponse("Unexpected failure; retry with backoff.", InternalError, { internal: examples.internal }),
};

export const quotaErrors = {
  409: jsonResponse("Idempotency-Key conflict.", ConflictError, { idempotencyConflict: examples.idempotencyConflict }),
  429: jsonResponse("The monthly quota is used up.", UsageLimitError, { usageLimit: examples.usageLimit }),
};

/** The 413 of an operation whose body may have at most `maxSize` bytes. */
export function bodyLimitError(maxSize: number) {
  return {
    413: jsonResponse(`The body is over ${describeSize(maxSize)}.`, PayloadTooLargeError, {
      tooLarge: { summary: "A body over the limit", value: payloadTooLarge(maxSize) },
    }),
  };
}
