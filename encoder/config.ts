import { hostname } from "node:os";
import { z } from "zod";
import { DEFAULT_WATCHDOG } from "./ffmpeg/watchdog";

/** A switch: true, false, 1 or 0, `byDefault` when unset. */
const flag = (byDefault: boolean) =>
  z
    .enum(["true", "false", "1", "0"])
    .default(byDefault ? "true" : "false")
    .transform((v) => v === "true" || v === "1");

/** The encoder's settings, from the environment (Fly secrets in production, the dev runner locally). */
export const encoderConfigSchema = z.object({
  PORT: z.coerce.number().int().default(8080),
  HOST: z.string().default("0.0.0.0"),
  /**
   * Named in every job-stage line, so a job whose parts ran on several encoders can be followed
   * (docs/scaling.md). The host name unless set: on Fly.io that is the Machine's id, as
   * `fly machine list` shows it; `npm run dev` names its encoders encoder-1, encoder-2, ...
   */
  ENCODER_NAME: z.string().min(1).default(hostname()),
  /** The Worker, for /internal calls. */
  API_INTERNAL_URL: z.string().url(),
  INTERNAL_SECRET: z.string().min(16),
  QSTASH_CURRENT_SIGNING_KEY: z.string().min(1),
  QSTASH_NEXT_SIGNING_KEY: z.string().min(1),
  /**
   * The encoder's own public base URL, as the Worker's ENCODER_URL names it: a delivery is
   * accepted only when its signature names this URL's delivery route.
   */
  PUBLIC_URL: z.string().url(),
  S3_ENDPOINT: z.string().url(),
  S3_REGION: z.string().default("auto"),
  S3_BUCKET: z.string().min(1),
  S3_ACCESS_KEY_ID: z.string().min(1),
  S3_SECRET_ACCESS_KEY: z.string().min(1),
  WORK_DIR: z.string().default("/tmp/encoder"),
  /** Development only: lets sources on 127.0.0.1 through the SSRF guard. Never set in production. */
  ALLOW_LOOPBACK_SOURCES: flag(false),
  MAX_SOURCE_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(5 * 1024 ** 3),
  DOWNLOAD_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .default(30 * 60_000),
  /** A download slower than DOWNLOAD_MIN_BYTES_PER_SECOND over any DOWNLOAD_STALL_MS is given up. */
  DOWNLOAD_STALL_MS: z.coerce.number().int().positive().default(30_000),
  DOWNLOAD_MIN_BYTES_PER_SECOND: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(32 * 1024),
  HEARTBEAT_MS: z.coerce.number().int().positive().default(2_000),
  /**
   * Whether an encoder that leads its session sets the session's niceness to its runs' lowest
   * (ffmpeg/priority.ts): on, so that encoders sharing a machine's cores make a stream's start
   * first; off in the e2e suites, whose stacks share the cores with the test runs themselves.
   */
  SESSION_NICENESS: flag(true),
  /** A run of FFmpeg or ffprobe that makes no progress (nothing encoded, nothing read) for this long is stopped (ffmpeg/watchdog.ts). */
  FFMPEG_STALL_MS: z.coerce.number().int().positive().default(DEFAULT_WATCHDOG.stallMs),
  /** An FFmpeg run on N seconds of media is stopped after N × this many seconds, plus FFMPEG_STALL_MS. */
  FFMPEG_TIME_LIMIT_FACTOR: z.coerce.number().positive().default(DEFAULT_WATCHDOG.timeLimitFactor),
  /** How long a claim or a report to the Worker is asked again while the Worker or its database fails. */
  WORKER_RETRY_MS: z.coerce.number().int().nonnegative().default(120_000),
  /**
   * Bytes of data each FFmpeg or ffprobe run may hold (encoder/memory.ts); unset, the machine's
   * memory less the encoder's own share, split between CONCURRENCY jobs.
   */
  TOOL_MEMORY_BYTES: z.coerce.number().int().positive().optional(),
  /** Jobs encoded at once by this process; QStash flow control keeps the service-wide total at 2. */
  CONCURRENCY: z.coerce.number().int().positive().default(2),
  /**
   * On SIGTERM, how long running encodes are given to finish before they are stopped (and QStash
   * delivers them again). 0 stops them at once, as `npm run dev` wants; fly.toml sets it under
   * its kill_timeout, so that a deploy does not cost every running job an attempt.
   */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().nonnegative().default(0),
  /** Preset jobs on sources longer than this are encoded in parts across the pool (docs/scaling.md). */
  SPLIT_MIN_SECONDS: z.coerce.number().positive().default(60),
  /** About how long each part is. */
  SPLIT_PART_SECONDS: z.coerce.number().positive().default(30),
  /**
   * A single file's source of this many bytes or more, from an origin serving byte ranges, is
   * planned and split where it is, never downloaded whole (docs/scaling.md#parts-that-read-the-source-by-ranges);
   * a smaller one is downloaded, which costs no request more.
   */
  SPLIT_RANGED_MIN_BYTES: z.coerce
    .number()
    .int()
    .nonnegative()
    .default(64 * 1024 * 1024),
  /**
   * A streaming preset's sources longer than this are made in parts, whose first is a single short
   * segment: its stream plays sooner, and nothing is joined (docs/playback.md#how-a-stream-is-made).
   */
  STREAM_SPLIT_MIN_SECONDS: z.coerce.number().positive().default(20),
});

export type EncoderConfig = z.infer<typeof encoderConfigSchema>;

export function loadEncoderConfig(env: NodeJS.ProcessEnv = process.env): EncoderConfig {
  const parsed = encoderConfigSchema.safeParse(env);
  if (!parsed.success) {
    const names = parsed.error.issues.map((i) => i.path.join(".")).join(", ");
    throw new Error(`Encoder configuration is invalid or missing: ${names}`);
  }
  return parsed.data;
}
