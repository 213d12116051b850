import type { components, operations } from "./generated/openapi";

type Schemas = components["schemas"];

export type Job = Schemas["Job"];
export type JobStatus = Schemas["JobStatus"];
export type JobList = Schemas["JobList"];
export type JobListItem = Schemas["JobListItem"];
export type CreatedJob = Schemas["CreatedJob"];
export type CancelledJob = Schemas["CancelledJob"];
export type DownloadLink = Schemas["DownloadLink"];
export type CreateJobRequest = Schemas["CreateJobRequest"];
export type ListJobsQuery = NonNullable<operations["listJobs"]["parameters"]["query"]>;
export type EdlDocument = Schemas["EdlDocument"];
export type CreateEdlRequest = Schemas["CreateEdlRequest"];
export type CreatedEdlJob = Schemas["CreatedEdlJob"];
export type EdlValidation = Schemas["EdlValidation"];
export type PresetCatalogue = Schemas["PresetCatalogue"];
export type Preset = Schemas["Preset"];
export type WebhookEvent = Schemas["WebhookEvent"];
export type PlayableEvent = Schemas["PlayableEvent"];
export type Upload = Schemas["Upload"];
export type CreateUploadRequest = Schemas["CreateUploadRequest"];

/** Every error body the service documents; download-url's are a bare `{message}`. */
export type ErrorBody =
  | Schemas["InvalidJsonError"]
  | Schemas["ValidationError"]
  | Schemas["InvalidPresetError"]
  | Schemas["InvalidOperationError"]
  | Schemas["EdlValidationFailedError"]
  | Schemas["UnauthorizedError"]
  | Schemas["PresetNotAllowedError"]
  | Schemas["NotFoundError"]
  | Schemas["BareMessageError"]
  | Schemas["ConflictError"]
  | Schemas["PayloadTooLargeError"]
  | Schemas["UsageLimitError"]
  | Schemas["InternalError"];

export const TERMINAL_STATUSES: readonly JobStatus[] = ["completed", "failed", "cancelled"];
