import { createRoute, z } from "@hono/zod-openapi";
import { EXAMPLE_JOB_IDS, PLAYBACK_URL, SIGNED_OUTPUT_URL } from "../routes/jobs/examples";
import { Timestamp } from "./common";

/** The body of a job notification, as worker/lib/webhooks.ts builds it. */
const WebhookEvent = z
  .object({
    event: z.enum(["job.completed", "job.failed"]),
    jobId: z.uuid(),
    status: z.enum(["completed", "failed"]),
    preset: z.string(),
    outputUrl: z
      .url()
      .nullable()
      .openapi({ description: "Downloads directly, no key needed; signed when this attempt was sent." }),
    expiresAt: Timestamp.nullable(),
    playbackUrl: z.url().nullable().openapi({
      description:
        "A streaming preset's playback link (as the job's read gives it), signed when this attempt was sent; null for other presets and for a failed job.",
    }),
    playbackExpiresAt: Timestamp.nullable(),
    errorMessage: z.string().nullable(),
    duration: z.number().nullable(),
    createdAt: Timestamp,
    completedAt: Timestamp.nullable(),
  })
  .openapi("WebhookEvent");

/** The body of job.playable, as worker/lib/webhooks.ts builds it. */
const PlayableEvent = z
  .object({
    event: z.literal("job.playable"),
    jobId: z.uuid(),
    status: z.enum(["processing", "completed"]),
    preset: z.string(),
    playbackUrl: z.url().openapi({ description: "The playback link, signed when this attempt was sent." }),
    playbackExpiresAt: Timestamp,
    playableAt: Timestamp,
    createdAt: Timestamp,
  })
  .openapi("PlayableEvent");

const headers = z.object({
  "webhook-id": z.string().openapi({ description: "The same on every attempt of one notification: dedupe on it." }),
  "webhook-timestamp": z.string().openapi({ description: "Unix seconds when this attempt was signed." }),
  "webhook-signature": z
    .string()
    .openapi({ description: "`v1,<base64 HMAC-SHA256 of id.timestamp.body>` with the account's `whsec_` secret." }),
});

export const jobFinishedWebhook = createRoute({
  method: "post",
  path: "jobFinished",
  tags: ["Webhooks"],
  operationId: "jobFinished",
  summary: "A job finished",
  description:
    "Sent to the account's webhook when a job completes or fails, signed per Standard Webhooks. Answer with any 2xx; anything else is retried (5 retries), each attempt signed afresh. " +
    "It carries no API key: verify `webhook-signature` over `webhook-id`, `webhook-timestamp` and the raw body with the account's `whsec_` secret (any Standard Webhooks library, or the client's `verifyWebhook`), and refuse a timestamp far from now.",
  security: [],
  request: {
    headers,
    body: {
      content: {
        "application/json": {
          schema: WebhookEvent,
          examples: {
            completed: {
              summary: "Completed",
              value: {
                event: "job.completed",
                jobId: EXAMPLE_JOB_IDS.completed,
                status: "completed",
                preset: "mp4_264_720p",
                outputUrl: SIGNED_OUTPUT_URL,
                expiresAt: "2026-11-20T13:33:10.000Z",
                playbackUrl: null,
                playbackExpiresAt: null,
                errorMessage: null,
                duration: 62.5,
                createdAt: "2026-11-20T09:30:00.000Z",
                completedAt: "2026-11-20T09:32:51.906Z",
              },
            },
          },
        },
      },
    },
  },
  responses: { 200: { description: "Any 2xx acknowledges the notification." } },
});

export const jobPlayableWebhook = createRoute({
  method: "post",
  path: "jobPlayable",
  tags: ["Webhooks"],
  operationId: "jobPlayable",
  summary: "A job's stream became playable",
  description:
    "Sent once to the account's webhook when a streaming job's playback link is first given: every rendition has its first segment stored, usually within seconds of the job starting and long before it completes. Signed, retried and verified like job.completed (docs/playback.md).",
  security: [],
  request: {
    headers,
    body: {
      content: {
        "application/json": {
          schema: PlayableEvent,
          examples: {
            playable: {
              summary: "Playable while processing",
              value: {
                event: "job.playable",
                jobId: EXAMPLE_JOB_IDS.processing,
                status: "processing",
                preset: "hls_abr_264_basic",
                playbackUrl: PLAYBACK_URL,
                playbackExpiresAt: "2026-11-20T13:30:07.000Z",
                playableAt: "2026-11-20T09:30:07.512Z",
                createdAt: "2026-11-20T09:30:00.000Z",
              },
            },
          },
        },
      },
    },
  },
  responses: { 200: { description: "Any 2xx acknowledges the notification." } },
});
