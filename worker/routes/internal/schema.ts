import { z } from "zod";
import { outputKeyParts } from "../../../domain/jobs";
import { MAX_PARTS } from "../../../domain/split";

/** Postgres's integer: a larger number would be refused by the statement (a 500) rather than by the check. */
const MAX_INT4 = 2_147_483_647;

/** Which dispatch the delivery carries (the message's body, signed by QStash). */
export const claimBody = z.object({ dispatch: z.number().int().min(0).max(MAX_INT4) });
/** The claim a heartbeat or report belongs to: the number the claim's answer gave the encoder. */
const claimNumber = z.number().int().min(1).max(MAX_INT4);
export const heartbeatBody = z.object({
  claim: claimNumber,
  // Stored as a 4-byte real: rounded to one here, or a value too small for it (1e-113) would make
  // Postgres refuse the heartbeat with an underflow.
  progress: z.number().min(0).max(1).transform(Math.fround).optional(),
  /** The source's (or timeline's) duration in seconds, sent once the encoder knows it. */
  duration: z.number().nonnegative().optional(),
});
export const completeBody = z.object({
  claim: claimNumber,
  outputKey: z.string().refine((key) => outputKeyParts(key) !== null, {
    message: "Not an output key (one that names an account, a job and a file name)",
  }),
  duration: z.number().nonnegative().nullable(),
});
export const failBody = z.object({
  claim: claimNumber,
  errorMessage: z.string().min(1).max(2000),
  /** A failure at the source (download, decode) another attempt may not meet; the Worker decides whether one follows. */
  retryable: z.boolean(),
  duration: z.number().nonnegative().nullable().optional(),
});

const count = z.number().int().positive().max(MAX_INT4);

/** A stream's parts' segments: one entry a part, each starting where the one before ended. */
const streamSegmentsInOrder = (segments: readonly { first: number; count: number }[], parts: number) =>
  segments.length === parts &&
  segments.every((s, i) => s.first === (i === 0 ? 0 : segments[i - 1].first + segments[i - 1].count));

/** A rendition's folder name: a rung's height, or the audio (domain/stream/layout.ts). */
const renditionName = z.string().regex(/^(\d{1,5}p|audio)$/);
/** A stream's segments at most: an 8-hour source in 1-second segments, and room to spare. */
const MAX_SEGMENTS = 100_000;

const streamLayout = z.object({
  segmentType: z.enum(["mpegts", "fmp4"]),
  manifest: z.enum(["hls", "dash", "cmaf"]),
  segmentSeconds: z.number().positive().max(60),
  programDateTime: z.boolean(),
  renditions: z
    .array(
      z.object({
        name: renditionName,
        kind: z.enum(["video", "audio"]),
        bandwidth: count,
        averageBandwidth: count,
        width: count.max(16384).optional(),
        height: count.max(16384).optional(),
        frameRate: z
          .string()
          .regex(/^\d{1,6}\/\d{1,6}$/)
          .optional(),
      }),
    )
    .min(1)
    .max(16)
    .refine((renditions) => new Set(renditions.map((r) => r.name)).size === renditions.length, {
      message: "Each rendition's name once",
    }),
});

/** A split job's plan (domain/split.ts), as the encoder that split it sends it: parts in order, end to end over every frame. */
const splitPlan = z
  .object({
    fps: z.object({ num: count, den: count }),
    height: count,
    width: count,
    sampleAspect: z.number().positive().max(MAX_INT4),
    totalFrames: count,
    gopFrames: count,
    parts: z
      .array(
        z.object({
          index: z.number().int().min(0).max(MAX_PARTS),
          firstFrame: z.number().int().min(0).max(MAX_INT4),
          frameCount: count,
          from: z.number().nonnegative(),
          to: z.number().nonnegative(),
        }),
      )
      .min(1)
      .max(MAX_PARTS),
    audio: z.boolean(),
    audioStart: z.number(),
    stream: z
      .object({
        layout: streamLayout,
        segments: z
          .array(z.object({ first: z.number().int().min(0).max(MAX_INT4), count: count }))
          .min(1)
          .max(MAX_PARTS),
        videoIndex: z.number().int().min(0).max(MAX_INT4),
        videoStart: z.number(),
        audioIndex: z.number().int().min(0).max(MAX_INT4).nullable(),
        audioStart: z.number().nullable(),
      })
      .optional(),
    ranges: z.object({ videoIndex: z.number().int().min(0).max(MAX_INT4) }).optional(),
  })
  .refine(
    (plan) =>
      plan.parts.every(
        (part, i) =>
          part.index === i &&
          part.firstFrame === (i === 0 ? 0 : plan.parts[i - 1].firstFrame + plan.parts[i - 1].frameCount),
      ) && plan.parts.reduce((frames, part) => frames + part.frameCount, 0) === plan.totalFrames,
    { message: "The parts must be numbered in order and cover every frame once, end to end", path: ["parts"] },
  )
  .refine(({ parts, stream }) => !stream || streamSegmentsInOrder(stream.segments, parts.length), {
    message: "A stream's parts must hold its segments in order, end to end, one entry a part",
    path: ["stream"],
  });
export const splitBody = z.object({
  claim: claimNumber,
  plan: splitPlan,
  /** The tasks whose inputs are stored so far (the audio's is `parts.length`); all of them when absent. */
  stored: z
    .array(z.number().int().min(0).max(MAX_PARTS))
    .max(MAX_PARTS + 1)
    .optional(),
  /** The tasks the splitting encoder runs itself once their inputs are stored: no message is published for them. */
  keep: z.array(z.number().int().min(0).max(MAX_PARTS)).max(2).optional(),
});

export const partHeartbeatBody = heartbeatBody.pick({ claim: true, progress: true });
export const partCompleteBody = z.object({ claim: claimNumber, outputKey: z.string().min(1) });
export const partFailBody = failBody.pick({ claim: true, errorMessage: true, retryable: true });

/** Segments a stream's encoder stored, and the layout with its first report (domain/stream/). */
export const streamReportBody = z.object({
  claim: claimNumber,
  /** The part that made them; absent when the job's own encode did. */
  part: z.number().int().min(0).max(MAX_PARTS).optional(),
  layout: streamLayout.optional(),
  /** Answer with each rendition's run of segments recorded so far (a stream made again skips those). */
  listed: z.boolean().optional(),
  segments: z
    .array(
      z.object({
        rendition: renditionName,
        index: z.number().int().min(0).max(MAX_SEGMENTS),
        duration: z.number().positive().max(3600),
        start: z.number().nonnegative().max(1e9).optional(),
        codecs: z
          .string()
          .regex(/^[A-Za-z0-9.]{1,64}$/)
          .optional(),
      }),
    )
    // Within the internal body limit (64 KiB): the encoder sends more in reports of their own.
    .max(300),
});
