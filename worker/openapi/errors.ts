/**
 * The contract's error bodies (docs/contract.md §8) as schemas, and the responses routes share. Their
 * `error` classes are ApiError's closed set, and ApiError's constructors take these schemas'
 * types, so a thrown error has the documented shape; the renderer sends it as is.
 */
import { z } from "@hono/zod-openapi";
import { ApiError, ERROR_KINDS } from "../errors";
import { idempotencyConflict, quotaUsedUp, unknownPreset } from "../lib/refusals";
import { jsonResponse, PlanId } from "./common";

const message = z.string().openapi({ description: "Text for a person; clients should read this first." });

export const InvalidJsonError = z
  .object({ error: z.literal(ERROR_KINDS.invalidJson), message })
  .openapi("InvalidJsonError", { description: "The body could not be parsed as JSON (whatever its Content-Type)." });

export const ValidationError = z
  .object({
    error: z.literal(ERROR_KINDS.validation),
    message: z.literal("Invalid request parameters"),
    details: z.array(
      z.object({
        field: z.string().openapi({ description: 'Dotted path of the field, or "body" for the body as a whole.' }),
        message: z
          .string()
          .openapi({ description: '"Invalid input": missing; "Invalid input URL": not an absolute http(s) URL.' }),
      }),
    ),
  })
  .openapi("ValidationError", { description: "The body does not match the schema." });

export const InvalidPresetError = z
  .object({
    error: z.literal(ERROR_KINDS.invalidPreset),
    message,
    availablePresets: z
      .array(z.string())
      .openapi({ description: "Every preset the service knows, not only the plan's." }),
  })
  .openapi("InvalidPresetError");

export const InvalidOperationError = z
  .object({ error: z.literal(ERROR_KINDS.invalidOperation), message })
  .openapi("InvalidOperationError", { description: "Cancel on a job that is not queued or processing." });

export const EdlValidationFailedError = z
  .object({ error: z.literal(ERROR_KINDS.edlValidationFailed), message, errors: z.array(z.string()) })
  .openapi("EdlValidationFailedError");

const UnauthorizedError = z
  .object({ error: z.literal(ERROR_KINDS.unauthorized), message })
  .openapi("UnauthorizedError", {
    description:
      "Missing or malformed header, unrecognised prefix, unknown or revoked key: one body for all five. Not retryable.",
  });

export const PresetNotAllowedError = z
  .object({
    error: z.literal(ERROR_KINDS.presetNotAllowed),
    code: z.literal(ERROR_KINDS.presetNotAllowed),
    message: message.openapi({ description: "Names the plan by its display name." }),
    availablePresets: z.array(z.string()).openapi({ description: "The presets the caller's plan includes." }),
    requiredPlan: PlanId,
    yourPlan: PlanId,
    upgradeMessage: z.string(),
  })
  .openapi("PresetNotAllowedError");

export const NotFoundError = z.object({ error: z.literal(ERROR_KINDS.notFound), message }).openapi("NotFoundError", {
  description: "The job does not exist or belongs to another account; the two are not told apart.",
});

export const BareMessageError = z
  .strictObject({ message })
  .openapi("BareMessageError", { description: "GET /jobs/{id}/download-url errors: a message and no `error` field." });

const UsageLimitError = z
  .object({
    error: z.literal(ERROR_KINDS.usageLimitExceeded),
    message,
    usage: z.object({
      current: z.int(),
      limit: z.int(),
      plan: z.string().openapi({ description: "Plan display name." }),
    }),
  })
  .openapi("UsageLimitError", {
    description:
      "The monthly quota is used up. A quota, not a rate limit: retrying does not help until the month rolls over or the plan changes.",
  });

const ConflictError = z
  .object({ error: z.literal(ERROR_KINDS.conflict), message })
  .openapi("ConflictError", { description: "An Idempotency-Key reused with another body, or still in progress." });

export const PayloadTooLargeError = z
  .object({ error: z.literal(ERROR_KINDS.payloadTooLarge), message })
  .openapi("PayloadTooLargeError", {
    description: "The body is over the operation's size limit; it is refused before it is read whole.",
  });

const InternalError = z
  .object({ error: z.literal(ERROR_KINDS.internal), message, requestId: z.uuid() })
  .openapi("InternalError", {
    description: "Unexpected; safe to retry with backoff. `requestId` is fresh for each failure.",
  });

export type ValidationBody = z.infer<typeof ValidationError>;
export type InvalidPresetBody = z.infer<typeof InvalidPresetError>;
export type EdlValidationFailedBody = z.infer<typeof EdlValidationFailedError>;
export type PresetNotAllowedBody = z.infer<typeof PresetNotAllowedError>;
export type UsageLimitBody = z.infer<typeof UsageLimitError>;

/** Example bodies, made by the constructors the handlers throw, so the document shows what is sent. */
export const examples = {
  invalidJson: { summary: "The body is not JSON", value: ApiError.invalidJson().body },
  unauthorized: {
    summary: "No key, a malformed or unknown key, or a revoked one",
    value: ApiError.unauthorized().body,
  },
  notFound: { summary: "No such job for this account", value: ApiError.notFound().body },
  internal: {
    summary: "An unexpected failure",
    value: { ...ApiError.internal("0b4f6a55-3f8e-4a43-9a58-2d1c9e0b7c11").body },
  },
  usageLimit: { summary: "The free plan's ten jobs are used up", value: quotaUsedUp("free", 10, 10).body },
  idempotencyConflict: {
    summary: "The Idempotency-Key was used with another body",
    value: idempotencyConflict.otherBody().body,
  },
  unknownPreset: { summary: "An unknown preset", value: unknownPreset("mp4_999p").body },
};

/** Responses every authenticated operation shares. */
export const authenticatedErrors = {
  401: jsonResponse("Authentication failed.", UnauthorizedError, { unauthorized: examples.unauthorized }),
  500: jsonResponse("Unexpected failure; retry with backoff.", InternalError, { internal: examples.internal }),
};

export const quotaErrors = {
  409: jsonResponse("Idempotency-Key conflict.", ConflictError, { idempotencyConflict: examples.idempotencyConflict }),
  429: jsonResponse("The monthly quota is used up.", UsageLimitError, { usageLimit: examples.usageLimit }),
};

export const ForbiddenError = z.object({ error: z.literal(ERROR_KINDS.forbidden), message }).openapi("ForbiddenError", {
  description: "A playback link whose signature is tampered, expired, or another job's.",
});

export const MethodNotAllowedError = z
  .object({ error: z.literal(ERROR_KINDS.methodNotAllowed), message })
  .openapi("MethodNotAllowedError", { description: "A method the path does not take; `Allow` names those it does." });
