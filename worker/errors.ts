import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The one error type handlers throw. `body` is the contract's error body exactly as the spec
 * gives it (usually `{error, message, ...}`; download-url errors are a bare `{message}`).
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly body: Record<string, unknown>,
  ) {
    super(typeof body.message === "string" ? body.message : String(body.error));
  }

  static notFound(message = "Job not found") {
    return new ApiError(404, { error: "Not found", message });
  }

  static validation(details: { field: string; message: string }[]) {
    return new ApiError(400, { error: "Validation error", message: "Invalid request parameters", details });
  }

  static unauthorized() {
    return new ApiError(401, {
      error: "Unauthorized",
      message: "Missing or invalid API key. Use the header Authorization: Bearer spk_xxx or Bearer sk_xxx",
    });
  }

  /** download-url errors carry no `error` field (spec: GET /jobs/{id}/download-url). */
  static bare(status: ContentfulStatusCode, message: string) {
    return new ApiError(status, { message });
  }
}

export function renderError(err: Error, c: Context): Response {
  if (err instanceof ApiError) return c.json(err.body, err.status);
  if (err instanceof HTTPException && err.status < 500) {
    return c.json({ error: "Bad request", message: err.message || "Bad request" }, err.status);
  }
  const requestId = crypto.randomUUID();
  console.error(JSON.stringify({ level: "error", requestId, method: c.req.method, path: c.req.path, error: describeError(err) }));
  return c.json(
    { error: "Internal server error", message: "An unexpected error occurred. Retry with backoff.", requestId },
    500,
  );
}

/** Fields of the Postgres driver's errors worth a log line (drizzle's "Failed query" wraps one as its cause). */
const DRIVER_FIELDS = ["code", "detail", "hint", "severity", "table", "column", "constraint", "routine"] as const;

/**
 * An error for the log: its stack, and down its chain of causes each one's name, message and
 * whatever of the driver's fields it carries, so the log says why a query failed.
 */
export function describeError(err: unknown, depth = 0): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const described: Record<string, unknown> = { name: err.name, message: err.message };
  for (const key of DRIVER_FIELDS) {
    const value = (err as unknown as Record<string, unknown>)[key];
    if (value !== undefined && value !== null && value !== "") described[key] = value;
  }
  if (depth === 0) described.stack = err.stack;
  if (err.cause !== undefined && depth < MAX_CAUSES) described.cause = describeError(err.cause, depth + 1);
  return described;
}

const MAX_CAUSES = 5;
