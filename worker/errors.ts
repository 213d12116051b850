import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type {
  EdlValidationFailedBody,
  InvalidPresetBody,
  PresetNotAllowedBody,
  UsageLimitBody,
  ValidationBody,
} from "./openapi/errors";
import { describeError } from "./services/error-log";

/**
 * Every `error` class the service answers with: the contract's Errors table (docs/contract.md
 * §8.1), then the few the contract does not list (the idempotency and internal conflicts,
 * QStash's non-retryable convention, a webhook attempt that failed, the internal API without its
 * cache, and Hono's own refusals).
 */
export const ERROR_KINDS = {
  invalidJson: "Invalid JSON",
  validation: "Validation error",
  invalidPreset: "Invalid preset",
  invalidOperation: "Invalid operation",
  edlValidationFailed: "EDL validation failed",
  unauthorized: "Unauthorized",
  presetNotAllowed: "PRESET_NOT_ALLOWED",
  notFound: "Not found",
  usageLimitExceeded: "Usage limit exceeded",
  internal: "Internal server error",
  conflict: "Conflict",
  payloadTooLarge: "Payload too large",
  malformedDelivery: "Malformed delivery",
  webhookNotDelivered: "Webhook not delivered",
  serviceUnavailable: "Service unavailable",
  badRequest: "Bad request",
  forbidden: "Forbidden",
  methodNotAllowed: "Method not allowed",
} as const;

type ErrorKind = (typeof ERROR_KINDS)[keyof typeof ERROR_KINDS];

/** An error body: a class of problem and a message, plus recovery fields; or download-url's bare message. */
export type ErrorBody = { error: ErrorKind; message: string } & Record<string, unknown>;
type BareErrorBody = { message: string };

const UNAUTHORIZED_MESSAGE =
  "Missing or invalid API key. Use the header Authorization: Bearer spk_xxx or Bearer sk_xxx";
const INTERNAL_MESSAGE = "An unexpected error occurred. Retry with backoff.";

/**
 * The one error type handlers and middleware throw, and app.onError (renderError) the one place
 * that writes it as JSON. Made only through the constructors below, one per kind, so every body
 * has a class from the closed set above and the fields the contract gives that class.
 */
export class ApiError extends Error {
  private constructor(
    readonly status: ContentfulStatusCode,
    readonly body: ErrorBody | BareErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
  }

  static invalidJson(message = "The request body is not valid JSON") {
    return new ApiError(400, { error: ERROR_KINDS.invalidJson, message });
  }

  static validation(details: ValidationBody["details"]) {
    return new ApiError(400, { error: ERROR_KINDS.validation, message: "Invalid request parameters", details });
  }

  static invalidPreset(fields: Omit<InvalidPresetBody, "error">) {
    return new ApiError(400, { error: ERROR_KINDS.invalidPreset, ...fields });
  }

  static invalidOperation(message: string) {
    return new ApiError(400, { error: ERROR_KINDS.invalidOperation, message });
  }

  static edlValidationFailed(fields: Omit<EdlValidationFailedBody, "error">) {
    return new ApiError(400, { error: ERROR_KINDS.edlValidationFailed, ...fields });
  }

  /** The five API-key failures share the default message; the internal routes name their signature. */
  static unauthorized(message = UNAUTHORIZED_MESSAGE) {
    return new ApiError(401, { error: ERROR_KINDS.unauthorized, message });
  }

  static presetNotAllowed(fields: Omit<PresetNotAllowedBody, "error" | "code">) {
    return new ApiError(403, { error: ERROR_KINDS.presetNotAllowed, code: ERROR_KINDS.presetNotAllowed, ...fields });
  }

  /** A playback link whose signature is not this job's, or has expired (docs/playback.md#the-link). */
  static forbidden(message: string) {
    return new ApiError(403, { error: ERROR_KINDS.forbidden, message });
  }

  /** A playback path asked with anything but GET, HEAD or OPTIONS. */
  static methodNotAllowed(allowed: readonly string[]) {
    return new ApiError(
      405,
      { error: ERROR_KINDS.methodNotAllowed, message: `Use ${allowed.join(", ")}.` },
      { Allow: allowed.join(", ") },
    );
  }

  static notFound(message = "Job not found") {
    return new ApiError(404, { error: ERROR_KINDS.notFound, message });
  }

  /**
   * download-url's errors carry no `error` field (docs/contract.md §5.5); 410 is the
   * contract's row without a class, the output that can no longer be signed.
   */
  static bare(status: 400 | 404 | 410, message: string) {
    return new ApiError(status, { message });
  }

  static usageLimitExceeded(fields: Omit<UsageLimitBody, "error">) {
    return new ApiError(429, { error: ERROR_KINDS.usageLimitExceeded, ...fields });
  }

  /** Idempotency-Key reuse, and the internal API's "the job left the state you worked in" (with its status). */
  static conflict(message: string, extra: { status?: string } = {}) {
    return new ApiError(409, { error: ERROR_KINDS.conflict, message, ...extra });
  }

  static payloadTooLarge(message: string) {
    return new ApiError(413, { error: ERROR_KINDS.payloadTooLarge, message });
  }

  /** A QStash message that can never succeed: 489 with Upstash-NonRetryable-Error tells QStash not to retry it. */
  static malformedDelivery(message: string) {
    return new ApiError(
      489 as ContentfulStatusCode,
      { error: ERROR_KINDS.malformedDelivery, message },
      { "Upstash-NonRetryable-Error": "true" },
    );
  }

  /** The account's endpoint did not take a webhook attempt; a 5xx makes QStash try again. */
  static webhookNotDelivered(reason: string) {
    return new ApiError(502, { error: ERROR_KINDS.webhookNotDelivered, message: reason });
  }

  /** A service the answer depends on cannot be reached; the caller asks again later (the encoder does, on any 5xx). */
  static serviceUnavailable(message: string) {
    return new ApiError(503, { error: ERROR_KINDS.serviceUnavailable, message });
  }

  /** Refusals Hono's own middleware raises as HTTPException. */
  static badRequest(status: ContentfulStatusCode, message: string) {
    return new ApiError(status, { error: ERROR_KINDS.badRequest, message });
  }

  static internal(requestId: string) {
    return new ApiError(500, { error: ERROR_KINDS.internal, message: INTERNAL_MESSAGE, requestId });
  }
}

/** app.onError: the only writer of error JSON. Unexpected errors are logged with their causes under a fresh requestId. */
export function renderError(err: Error, c: Context): Response {
  if (err instanceof ApiError) return c.json(err.body, err.status, err.headers);
  if (err instanceof HTTPException && err.status < 500) {
    const refused = ApiError.badRequest(err.status, err.message || "Bad request");
    return c.json(refused.body, refused.status);
  }
  const requestId = crypto.randomUUID();
  console.error(
    JSON.stringify({ level: "error", requestId, method: c.req.method, path: c.req.path, error: describeError(err) }),
  );
  const internal = ApiError.internal(requestId);
  return c.json(internal.body, internal.status);
}

/** A failure of work about one job that no request answers for (after the response, in the sweep): a log line with its cause. */
export function logJobError(msg: string, jobId: string, err: unknown): void {
  console.error(JSON.stringify({ level: "error", msg, jobId, error: describeError(err) }));
}
