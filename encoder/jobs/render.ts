import { EDL_PRESET_ID } from "../../domain/presets/catalogue";
import type { EncoderConfig } from "../config";
import type { Watchdog } from "../ffmpeg/watchdog";
import type { DownloadPolicy } from "../source/download";
import type { InternalApi } from "../internal-api";
import type { KeptScratch } from "../split/kept-scratch";
import type { Uploader } from "../upload/s3";
import type { Renderers } from "./pipeline";
import { renderPresetJob, type Splitting } from "./preset-job";
import { renderJoin, renderPart } from "./split-jobs";
import { renderStreamFinish, renderStreamPart } from "./stream-parts";
import { renderTimelineJob } from "./timeline-job";

function downloadPolicy(config: EncoderConfig): DownloadPolicy {
  return {
    allowLoopback: config.ALLOW_LOOPBACK_SOURCES,
    maxBytes: config.MAX_SOURCE_BYTES,
    timeoutMs: config.DOWNLOAD_TIMEOUT_MS,
    minRate: { bytesPerSecond: config.DOWNLOAD_MIN_BYTES_PER_SECOND, windowMs: config.DOWNLOAD_STALL_MS },
  };
}

function ffmpegWatchdog(config: EncoderConfig): Watchdog {
  return { stallMs: config.FFMPEG_STALL_MS, timeLimitFactor: config.FFMPEG_TIME_LIMIT_FACTOR };
}

/**
 * Timelines go to the timeline renderer; every other job is a catalogue preset, which a long
 * source may split into parts, each rendered on its own, then joined (docs/scaling.md).
 */
export function createRenderers(
  config: EncoderConfig,
  io: { api: InternalApi; uploader: Uploader; kept?: KeptScratch },
): Renderers {
  const policy = downloadPolicy(config);
  const watchdog = ffmpegWatchdog(config);
  const splitting: Splitting = {
    ...io,
    watchdog,
    settings: {
      minSeconds: config.SPLIT_MIN_SECONDS,
      streamMinSeconds: config.STREAM_SPLIT_MIN_SECONDS,
      partSeconds: config.SPLIT_PART_SECONDS,
      rangedMinBytes: config.SPLIT_RANGED_MIN_BYTES,
    },
  };
  return {
    job: (job, ctx) => {
      if (job.preset === EDL_PRESET_ID) return renderTimelineJob(job, ctx, policy, watchdog);
      return renderPresetJob(job, ctx, policy, splitting, watchdog);
    },
    part: (part, ctx) =>
      part.plan.stream ? renderStreamPart(splitting, part, ctx, policy) : renderPart(splitting, part, ctx, policy),
    join: (join, ctx) =>
      join.plan.stream ? renderStreamFinish(splitting, join, ctx) : renderJoin(splitting, join, ctx),
  };
}
