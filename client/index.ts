export {
  createVepClient,
  DEFAULT_BASE_URL,
  type CallOptions,
  type ClientOptions,
  type Created,
  type CreateOptions,
  type VepClient,
} from "./client";
export {
  ApiError,
  DownloadError,
  NetworkError,
  UnexpectedResponseError,
  NotPlayableError,
  UploadError,
  VepError,
  WaitTimeoutError,
  type ErrorKind,
} from "./errors";
export type * from "./types";
export { TERMINAL_STATUSES } from "./types";
export type { UploadOptions, UploadProgress, UploadSource } from "./upload";
export { DEFAULT_POLL_INTERVAL_MS, type PlayableJob, type WaitOptions } from "./wait";
export { verifyWebhook, WebhookVerificationError } from "./webhooks";
