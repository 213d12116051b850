import type { ErrorBody, Job } from "./types";

/**
 * What went wrong, by the status the service answered; each says whether retrying can help. A 4xx
 * the contract does not list is `bad-request`: the request, as sent, is what is wrong.
 */
export type ErrorKind =
  | "bad-request" // 400: the request (or the job's state) is wrong as sent
  | "unauthorized" // 401: no key, or a malformed, unknown or revoked one
  | "forbidden" // 403: the plan does not include the preset
  | "not-found" // 404: no such job for this key
  | "conflict" // 409: an Idempotency-Key reused with another body, or still in progress
  | "gone" // 410: the output can no longer be signed; run the job again
  | "payload-too-large" // 413: the body is over the operation's limit (1 MiB for a job, 4 MiB for a timeline); send less
  | "quota-exceeded" // 429: the monthly quota, or the account's open uploads or upload storage, is used up (not a rate limit)
  | "server" // 5xx: unexpected; retry with backoff
  | "network" // no answer at all: retry with backoff
  | "unexpected-response" // an answer that is not JSON (not the API's: a wrong base URL, a proxy's page); not retryable
  | "download" // the storage refused a signed download link (the API itself answered)
  | "upload"; // the storage refused an upload's presigned PUT

const KIND_BY_STATUS: Record<number, ErrorKind> = {
  400: "bad-request",
  401: "unauthorized",
  403: "forbidden",
  404: "not-found",
  409: "conflict",
  410: "gone",
  413: "payload-too-large",
  429: "quota-exceeded",
};

/** Only failures on the service's side or the way there are worth retrying (with backoff). */
const RETRYABLE: ReadonlySet<ErrorKind> = new Set(["server", "network"]);

export class VepError extends Error {
  override name = "VepError";
  /** Whether the same request may succeed later: true for 5xx and network failures only. */
  readonly retryable: boolean;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.retryable = RETRYABLE.has(kind);
  }
}

/** The service answered with an error status. */
export class ApiError extends VepError {
  override name = "ApiError";
  /** The contract's class of problem (`Validation error`, `PRESET_NOT_ALLOWED`, …); absent on download-url errors. */
  readonly error: string | undefined;

  constructor(
    readonly status: number,
    readonly body: ErrorBody | undefined,
  ) {
    const fields = (body ?? {}) as { message?: unknown; error?: unknown };
    const error = typeof fields.error === "string" ? fields.error : undefined;
    // The contract's advice: read `message` first, `error` is optional.
    super(kindOf(status), typeof fields.message === "string" ? fields.message : (error ?? `HTTP ${status}`));
    this.error = error;
  }

  /** The failure's id on a 500, to quote to support. */
  get requestId(): string | undefined {
    return this.body && "requestId" in this.body ? this.body.requestId : undefined;
  }
}

const DOWNLOAD_REASON: Record<number, string> = {
  403: ": the link was refused (expired, or altered on the way)",
  404: ": the output was removed after the link was signed",
};

/**
 * The storage answered a signed download link with an error status: the output was removed after
 * the link was signed (404), or the link was refused (403). Only the storage's own 5xx is worth
 * retrying; a retry signs a fresh link.
 */
export class DownloadError extends VepError {
  override name = "DownloadError";
  override readonly retryable: boolean;

  constructor(readonly status: number) {
    super(
      "download",
      `The storage answered the signed download link with HTTP ${status}${DOWNLOAD_REASON[status] ?? ""}`,
    );
    this.retryable = status >= 500;
  }
}

/**
 * The storage refused a presigned PUT of a direct upload (`part`: the part's number, null for a
 * single upload): its signature or expiry (403), a body of another length than signed (400, 403).
 * Only the storage's own 5xx is worth retrying, and the upload already tried it again.
 */
export class UploadError extends VepError {
  override name = "UploadError";
  override readonly retryable: boolean;

  constructor(
    readonly status: number,
    readonly part: number | null,
  ) {
    super(
      "upload",
      `The storage answered ${part === null ? "the upload's PUT" : `the PUT of part ${part}`} with HTTP ${status}`,
    );
    this.retryable = status >= 500;
  }
}

/** No answer: the service could not be reached, or the connection broke. */
export class NetworkError extends VepError {
  override name = "NetworkError";
  constructor(cause: unknown) {
    super(
      "network",
      `The service could not be reached: ${cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause)}`,
      { cause },
    );
  }
}

/**
 * The service answered with a success, but a body that is not JSON: a web server's or a proxy's
 * page where the API was expected, most often a wrong base URL. Asking again brings the same page,
 * so it is not retryable, unlike a NetworkError.
 */
export class UnexpectedResponseError extends VepError {
  override name = "UnexpectedResponseError";
  constructor(
    readonly status: number,
    contentType: string | null,
  ) {
    super(
      "unexpected-response",
      `The service answered HTTP ${status} with a body that is not JSON (${contentType ?? "no Content-Type"}): is the base URL the API's?`,
    );
  }
}

function kindOf(status: number): ErrorKind {
  return KIND_BY_STATUS[status] ?? (status >= 500 ? "server" : "bad-request");
}

/** An error body as parsed by openapi-fetch: JSON when the service sent JSON, else its text. */
export function toApiError(response: Response, parsed: unknown): ApiError {
  const body =
    typeof parsed === "object" && parsed !== null
      ? (parsed as ErrorBody)
      : parsed
        ? ({ message: String(parsed) } as ErrorBody)
        : undefined;
  return new ApiError(response.status, body);
}

/**
 * A wait (waitForJob, waitForPlayable) that reached its `timeoutMs` before the job did what it
 * waited for. The job goes on; `job` is the last read, if any came.
 */
export class WaitTimeoutError extends Error {
  override name = "WaitTimeoutError";

  constructor(
    readonly jobId: string,
    goal: string,
    readonly timeoutMs: number,
    readonly job: Job | undefined,
  ) {
    super(`job ${jobId} did not ${goal} within ${timeoutMs} ms${job ? ` (it is ${job.status})` : ""}; it goes on`);
  }
}

/** Why a job that ended has no playback link, by how it ended. */
function notPlayable(job: Job): string {
  if (job.status === "failed")
    return `job ${job.id} failed, so it has no playback link${job.errorMessage ? `: ${job.errorMessage}` : ""}`;
  if (job.status === "cancelled") return `job ${job.id} was cancelled, so it has no playback link`;
  return `job ${job.id} completed without a playback link (preset ${job.preset}): only the streaming presets (hls_*, dash_*, cmaf_*, live_*) give one`;
}

/**
 * waitForPlayable's job ended without a playback link: it failed, was cancelled, or completed
 * with a preset that is not a stream. `job` is the read that found it so.
 */
export class NotPlayableError extends Error {
  override name = "NotPlayableError";

  constructor(readonly job: Job) {
    super(notPlayable(job));
  }
}
