import { z } from "@hono/zod-openapi";
import { JOB_STATUSES } from "../../../domain/jobs";
import { isSourceUrl } from "../../../domain/urls";
import { Timestamp } from "../../openapi/common";
import { jobIdExamples } from "./examples";
import { jsonObject, storable } from "../../lib/json-body";

/** Missing fields read "Invalid input"; a bad URL reads "Invalid input URL" (docs/contract.md §8.1). */
const required = { error: (issue: { input: unknown }) => (issue.input === undefined ? "Invalid input" : undefined) };

export const createJobBody = z
  .object({
    inputUrl: z
      .unknown()
      .refine((v) => v !== undefined, "Invalid input")
      .refine((v) => v === undefined || isSourceUrl(v), "Invalid input URL")
      .transform((v) => v as string)
      .openapi({
        type: "string",
        format: "uri",
        description:
          "Absolute public http(s) URL of the source, without a user name or password. It is fetched later, by the encoder.",
        example: "https://media.example.com/source.mp4",
      }),
    preset: z
      .string(required)
      .min(1, "Invalid input")
      .openapi({ description: "Preset identifier (GET /presets).", example: "mp4_264_720p" }),
    // null is taken as "no metadata", like an absent field.
    metadata: storable(jsonObject())
      .nullish()
      .openapi({
        // jsonObject is a custom schema, so its JSON shape is spelt out here.
        type: ["object", "null"],
        additionalProperties: {},
        description: "Free-form key/value pairs stored with the job; returned on read as `clientMetadata`.",
      }),
  })
  .openapi("CreateJobRequest", { description: "Unknown fields are ignored; a `webhookUrl` here has no effect." });

/**
 * A positive integer, capped: any page past the last one lists nothing anyway, and the cap keeps
 * the row offset inside Postgres' bigint however many digits a client sends.
 */
const positiveIntOr = (fallback: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v) => (v !== undefined && /^\d+$/.test(v) && Number(v) >= 1 ? Math.min(Number(v), max) : fallback));

const MAX_PAGE_SIZE = 100;
const MAX_PAGE = 1_000_000_000;

/**
 * Never fails: bad page/limit values fall back to their defaults (docs/contract.md §5.3). Read from
 * `c.req.query()`, which keeps one value of a repeated parameter.
 */
export const listJobsQuery = z.object({
  // No minimum or maximum: the API takes any value (see positiveIntOr), and a client that checks
  // the document must not refuse what the API would take.
  page: positiveIntOr(1, MAX_PAGE).openapi({
    type: "integer",
    default: 1,
    description:
      "Page number, from 1. A value that is not a positive integer falls back to 1; a page past the last lists no jobs.",
    param: { name: "page", in: "query" },
  }),
  limit: positiveIntOr(10, MAX_PAGE_SIZE).openapi({
    type: "integer",
    default: 10,
    description: `Jobs per page. A value over ${MAX_PAGE_SIZE} is taken as ${MAX_PAGE_SIZE}; one that is not a positive integer falls back to 10. \`pagination.limit\` says the size used.`,
    param: { name: "limit", in: "query", examples: { small: { summary: "Two per page", value: 2 } } },
  }),
  /** Exact match: an unknown status matches nothing rather than being ignored. */
  status: z
    .string()
    .optional()
    .openapi({
      description: `Exact match on status (${JOB_STATUSES.join(", ")}); any other value lists nothing.`,
      param: {
        name: "status",
        in: "query",
        examples: { completed: { summary: "Completed jobs only", value: "completed" } },
      },
    }),
  preset: z
    .string()
    .optional()
    .openapi({
      description: "Exact match on the preset identifier.",
      param: {
        name: "preset",
        in: "query",
        examples: { mp4: { summary: "720p MP4 jobs only", value: "mp4_264_720p" } },
      },
    }),
});

export const jobIdParam = z.object({
  id: z.string().openapi({
    description: "Job id (a UUID). Anything else, like another account's job, is a 404.",
    param: { name: "id", in: "path", examples: jobIdExamples },
  }),
});

const JobStatus = z.enum(JOB_STATUSES).openapi("JobStatus");
const path = z.string().openapi({ description: "Relative to the host: prefix it with the base URL." });
const nullableTimestamp = Timestamp.nullable();
/** What the full read and the list item share. */
const jobFields = {
  id: z.uuid(),
  status: JobStatus,
  preset: z.string(),
  inputUrl: z.string(),
  outputUrl: z.url().nullable().openapi({
    description:
      "Signed download link, signed afresh on every read; needs no Authorization header. Null unless completed with its output in storage.",
  }),
  expiration: nullableTimestamp.openapi({ description: "When outputUrl stops working." }),
  playbackUrl: z.url().nullable().openapi({
    description:
      "For a streaming preset (hls_*, dash_*, cmaf_*, live_*): a signed link to its HLS master playlist (HLS and CMAF presets) or MPD (DASH presets), given as soon as every rendition has its first segment stored, while the job is still processing, and signed afresh on every read for the plan's link lifetime. Any player opens it as it is (no headers). Null for other presets, before that moment, and once the job has failed or been cancelled.",
  }),
  duration: z.number().nullable().openapi({
    description:
      "Source duration in seconds, measured during processing: set within a heartbeat of the encoder's probe of the source (for a timeline, its length), null until then.",
  }),
  errorMessage: z.string().nullable(),
};

export const Job = z
  .object({
    ...jobFields,
    retryCount: z
      .int()
      .min(0)
      .openapi({ description: "How many times the encoder retried; at most 2 (three attempts)." }),
    progress: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .openapi({ description: "Encoding progress from 0 to 1 while processing (additive field)." }),
    metadata: z
      .object({
        createdAt: Timestamp,
        startedAt: nullableTimestamp,
        completedAt: nullableTimestamp,
        lastCheckedAt: nullableTimestamp,
      })
      .openapi({ description: "Lifecycle timestamps; a stage not reached yet is null." }),
    clientMetadata: z
      .record(z.string(), z.unknown())
      .openapi({ description: "The metadata sent at creation ({} when none)." }),
    links: z.object({
      self: path,
      cancel: path.optional().openapi({ description: "Only while queued or processing: DELETE it." }),
      output: path.optional().openapi({ description: "Only when a link is signed: GET it for a fresh link." }),
    }),
  })
  .openapi("Job", { description: "A job as GET /jobs/{id} reads it." });

export const JobListItem = z
  .object({
    ...jobFields,
    createdAt: Timestamp,
    startedAt: nullableTimestamp,
    completedAt: nullableTimestamp,
    links: z.object({ self: path }),
  })
  .openapi("JobListItem", { description: "A job in a list: no retryCount; lifecycle timestamps at the top level." });

export const JobList = z
  .object({
    jobs: z.array(JobListItem).openapi({ description: "Newest first." }),
    pagination: z.object({
      page: z.int(),
      limit: z.int(),
      totalPages: z.int(),
      totalCount: z.int(),
      hasNext: z.boolean(),
      hasPrev: z.boolean(),
    }),
    links: z.object({ self: path, next: path.nullable(), prev: path.nullable() }),
  })
  .openapi("JobList");

export const CreatedJob = z
  .object({
    id: z.uuid(),
    status: z.literal("queued"),
    preset: z.string(),
    inputUrl: z.string(),
    webhookUrl: z.string().nullable().openapi({ description: "The webhook configured on the account, or null." }),
    createdAt: Timestamp,
    estimatedProcessingTime: z
      .string()
      .openapi({ description: "Encoding time range for the preset; queue wait not included." }),
    links: z.object({ self: path, cancel: path }),
    user: z.object({ remainingJobs: z.int().min(0), plan: z.string().openapi({ description: "Plan display name." }) }),
  })
  .openapi("CreatedJob");

export const CancelledJob = z
  .object({ id: z.uuid(), status: z.literal("cancelled"), message: z.string(), cancelledAt: Timestamp })
  .openapi("CancelledJob");

export const DownloadLink = z
  .object({ downloadUrl: z.url(), expiresAt: Timestamp, message: z.string() })
  .openapi("DownloadLink");

/** The headers of a creation's 201. */
export const createdHeaders = z.object({
  "Idempotent-Replayed": z.literal("true").optional().openapi({
    description:
      "Sent when the answer replays an earlier creation with the same Idempotency-Key and body: no new job, no quota unit.",
  }),
});

export const idempotencyKeyHeader = z.object({
  "Idempotency-Key": z
    .string()
    .min(1)
    .max(255)
    .optional()
    .openapi({
      description:
        "Optional. A retry with the same key and body within 24 h replays the first response (header Idempotent-Replayed: true) instead of creating a second job.",
      param: { name: "Idempotency-Key", in: "header" },
    }),
});
