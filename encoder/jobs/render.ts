import { EDL_PRESET_ID } from "../../domain/presets/catalogue";
import type { EncoderConfig } from "../config";
import type { Watchdog } from "../ffmpeg/watchdog";
import type { DownloadPolicy } from "../source/download";
import type { Renderer } from "./pipeline";
import { renderPresetJob } from "./preset-job";
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

/** Timelines go to the timeline renderer; every other job is a catalogue preset. */
export function createRenderer(config: EncoderConfig): Renderer {
  const policy = downloadPolicy(config);
  const watchdog = ffmpegWatchdog(config);
  return (job, ctx) => {
    if (job.preset === EDL_PRESET_ID) return renderTimelineJob(job, ctx, policy, watchdog);
    return renderPresetJob(job, ctx, policy, watchdog);
  };
}
