/**
 * Examples the OpenAPI document shows for the job operations. A request example and the
 * response example it leads to share a name; test/api/openapi-replay.test.ts replays every
 * request example against the running service, with real jobs standing in for these ids.
 */
import { findPreset } from "../../../domain/presets/catalogue";
import { ApiError } from "../../errors";
import { notCancellable, presetNotAllowed } from "../../lib/refusals";

/** One id per job state an example needs. */
export const EXAMPLE_JOB_IDS = {
  queued: "5d0b3c4e-7f1a-4b8e-9c2d-1a2b3c4d5e6f",
  processing: "8e2f1a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b",
  completed: "3f9a7c2e-1b4d-4e8f-a6c5-0d9e8f7a6b5c",
  failed: "c4b3a2f1-0e9d-4c8b-b7a6-f5e4d3c2b1a0",
  outputRemoved: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
  legacy: "2c1d0e9f-8a7b-4c6d-9e5f-4a3b2c1d0e9f",
  unknown: "6b1f3c1e-8c1a-4c63-9b8e-1d5a3f1e2c4b",
} as const;

const path = (id: string) => `/api/v1/jobs/${id}`;
const SOURCE = "https://media.example.com/source.mp4";
/** A playback link as GET /jobs/{id} gives one (docs/playback.md#the-link). */
export const PLAYBACK_URL =
  "https://api.example.com/play/8e2f1a3b-4c5d-4e6f-8a7b-9c0d1e2f3a4b/1795254792.q0N9mD0d3k6r5v2W8tYpZx1cB4nF7hJ2sL3aE5gQ9uM/master.m3u8";
export const SIGNED_OUTPUT_URL =
  "https://example-account.r2.cloudflarestorage.com/videos/outputs/9b2d6f40-3c1e-4a57-8f0e-6d2b1c4a7e93/3f9a7c2e-1b4d-4e8f-a6c5-0d9e8f7a6b5c/output.mp4" +
  "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261120T093310Z&X-Amz-Expires=14400&X-Amz-SignedHeaders=host" +
  "&X-Amz-Signature=6f1d0c8e2b7a4f3e9d5c1b0a8e7f6d5c4b3a2918e7d6c5b4a39281f0e1d2c3b4";

export const createJobExamples = {
  mp4: { summary: "Encode a file to 720p MP4", value: { inputUrl: SOURCE, preset: "mp4_264_720p" } },
  withMetadata: {
    summary: "With metadata kept for you",
    value: { inputUrl: SOURCE, preset: "hls_abr_264_basic", metadata: { orderId: 42, customer: "acme" } },
  },
  unknownPreset: { summary: "A preset the service does not know", value: { inputUrl: SOURCE, preset: "mp4_999p" } },
  presetAbovePlan: {
    summary: "A preset above the caller's plan (Starter)",
    value: { inputUrl: SOURCE, preset: "hls_abr_264_standard" },
  },
};

const created = (id: string, preset: string, estimate: string) => ({
  id,
  status: "queued",
  preset,
  inputUrl: SOURCE,
  webhookUrl: "https://hooks.example.com/video",
  createdAt: "2026-11-20T09:30:00.000Z",
  estimatedProcessingTime: estimate,
  links: { self: path(id), cancel: path(id) },
  user: { remainingJobs: 9, plan: "Starter" },
});

export const createdJobExamples = {
  mp4: { summary: "Queued", value: created(EXAMPLE_JOB_IDS.queued, "mp4_264_720p", "2-4 minutes") },
  withMetadata: {
    summary: "Queued (HLS ladder)",
    value: created(EXAMPLE_JOB_IDS.queued, "hls_abr_264_basic", "3-6 minutes"),
  },
};

export const createJobRefusals = {
  missingFields: {
    summary: "Missing fields",
    value: ApiError.validation([
      { field: "inputUrl", message: "Invalid input" },
      { field: "preset", message: "Invalid input" },
    ]).body,
  },
  notAUrl: {
    summary: "Not an absolute URL",
    value: ApiError.validation([{ field: "inputUrl", message: "Invalid input URL" }]).body,
  },
};

export const presetNotAllowedExample = {
  summary: "hls_abr_264_standard needs Indie/Pro",
  value: presetNotAllowed(findPreset("hls_abr_264_standard"), "free").body,
};

const lifecycle = (startedAt: string | null, completedAt: string | null, lastCheckedAt: string | null) => ({
  createdAt: "2026-11-20T09:30:00.000Z",
  startedAt,
  completedAt,
  lastCheckedAt,
});

const readJob = (id: string, fields: Record<string, unknown>) => ({
  id,
  status: "queued",
  preset: "mp4_264_720p",
  inputUrl: SOURCE,
  outputUrl: null,
  expiration: null,
  playbackUrl: null,
  duration: null,
  errorMessage: null,
  retryCount: 0,
  progress: null,
  metadata: lifecycle(null, null, null),
  clientMetadata: {},
  links: { self: path(id), cancel: path(id) },
  ...fields,
});

export const jobReadExamples = {
  queued: { summary: "Queued", value: readJob(EXAMPLE_JOB_IDS.queued, { clientMetadata: { orderId: 42 } }) },
  processing: {
    summary: "Processing, 40% done, its HLS stream already playable",
    value: readJob(EXAMPLE_JOB_IDS.processing, {
      status: "processing",
      preset: "hls_abr_264_basic",
      playbackUrl: PLAYBACK_URL,
      progress: 0.4,
      metadata: lifecycle("2026-11-20T09:30:04.120Z", null, "2026-11-20T09:31:02.480Z"),
    }),
  },
  completed: {
    summary: "Completed, with a signed link",
    value: readJob(EXAMPLE_JOB_IDS.completed, {
      status: "completed",
      outputUrl: SIGNED_OUTPUT_URL,
      expiration: "2026-11-20T13:33:10.000Z",
      duration: 62.5,
      progress: 1,
      metadata: lifecycle("2026-11-20T09:30:04.120Z", "2026-11-20T09:32:51.906Z", "2026-11-20T09:32:51.906Z"),
      links: { self: path(EXAMPLE_JOB_IDS.completed), output: `${path(EXAMPLE_JOB_IDS.completed)}/download-url` },
    }),
  },
  failed: {
    summary: "Failed after its retries",
    value: readJob(EXAMPLE_JOB_IDS.failed, {
      status: "failed",
      errorMessage: "Download failed: the source answered HTTP 404",
      retryCount: 2,
      metadata: lifecycle("2026-11-20T09:30:04.120Z", null, "2026-11-20T09:30:21.774Z"),
      links: { self: path(EXAMPLE_JOB_IDS.failed) },
    }),
  },
  outputRemoved: {
    summary: "Completed, but the output is no longer in storage",
    value: readJob(EXAMPLE_JOB_IDS.outputRemoved, {
      status: "completed",
      duration: 62.5,
      progress: 1,
      metadata: lifecycle("2026-11-20T09:30:04.120Z", "2026-11-20T09:32:51.906Z", "2026-11-20T09:32:51.906Z"),
      links: { self: path(EXAMPLE_JOB_IDS.outputRemoved) },
    }),
  },
};

/** Path parameter examples: which job each response example is about. */
export const jobIdExamples = Object.fromEntries(
  Object.entries(EXAMPLE_JOB_IDS).map(([name, id]) => [name, { summary: `A ${name} job`, value: id }]),
) as Record<keyof typeof EXAMPLE_JOB_IDS, { summary: string; value: string }>;

export const jobListExamples = {
  firstPage: {
    summary: "The first page",
    value: {
      jobs: [
        {
          id: EXAMPLE_JOB_IDS.completed,
          status: "completed",
          preset: "mp4_264_720p",
          inputUrl: SOURCE,
          outputUrl: SIGNED_OUTPUT_URL,
          expiration: "2026-11-20T13:33:10.000Z",
          playbackUrl: null,
          duration: 62.5,
          errorMessage: null,
          createdAt: "2026-11-20T09:30:00.000Z",
          startedAt: "2026-11-20T09:30:04.120Z",
          completedAt: "2026-11-20T09:32:51.906Z",
          links: { self: path(EXAMPLE_JOB_IDS.completed) },
        },
      ],
      pagination: { page: 1, limit: 10, totalPages: 3, totalCount: 21, hasNext: true, hasPrev: false },
      links: { self: "/api/v1/jobs?page=1&limit=10", next: "/api/v1/jobs?page=2&limit=10", prev: null },
    },
  },
};

export const cancelExamples = {
  queued: {
    summary: "A queued job never starts",
    value: {
      id: EXAMPLE_JOB_IDS.queued,
      status: "cancelled",
      message: "Job cancelled successfully",
      cancelledAt: "2026-11-20T09:30:09.311Z",
    },
  },
  processing: {
    summary: "A processing job stops shortly",
    value: {
      id: EXAMPLE_JOB_IDS.processing,
      status: "cancelled",
      message: "Job is processing and will stop shortly",
      cancelledAt: "2026-11-20T09:31:15.042Z",
    },
  },
};

export const notCancellableExamples = {
  completed: {
    summary: "The job has finished",
    value: notCancellable("completed").body,
  },
  failed: {
    summary: "The job has failed",
    value: notCancellable("failed").body,
  },
};

export const downloadLinkExamples = {
  completed: {
    summary: "A fresh link",
    value: {
      downloadUrl: SIGNED_OUTPUT_URL,
      expiresAt: "2026-11-20T13:33:10.000Z",
      message: "Download link signed; it needs no Authorization header and works until expiresAt.",
    },
  },
};

export const downloadRefusals = {
  queued: {
    summary: "Not completed yet",
    value: { message: "Job is not completed (status 'queued'); there is no output to download." },
  },
  outputRemoved: {
    summary: "The output was removed",
    value: { message: "Job has no output: it has been removed from storage." },
  },
};

export const downloadGoneExamples = {
  legacy: {
    summary: "Stored under the older layout",
    value: {
      message:
        "This job's output was stored under an older storage layout and can no longer be signed. Run the job again.",
    },
  },
};

export const downloadNotFoundExamples = {
  unknown: { summary: "No such job for this account", value: { message: "Job not found" } },
};
