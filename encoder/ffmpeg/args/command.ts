import type { AudioStreamInfo, ProbeSummary, VideoStreamInfo } from "../probe";
import { MAX_AUDIO_CHANNELS } from "../../../domain/presets/recipes";
import { PermanentJobError } from "../../jobs/failures";

export interface FfmpegCommand {
  args: string[];
}

export interface BuildContext {
  presetId: string;
  /** Local path of the downloaded source. */
  input: string;
  /** Directory the outputs are written to (absolute). */
  outDir: string;
  probe: ProbeSummary;
}

/** Used for keyframe intervals and frame arithmetic when the container states no frame rate. */
export const FALLBACK_FPS = 30;

/**
 * The head every command shares. `logLevel` is "info" only where a filter reports at that
 * level (loudnorm's measurement); elsewhere warnings and errors are all the stderr we keep.
 */
export function head(input: string, logLevel: "warning" | "info" = "warning"): string[] {
  return [
    "-hide_banner",
    // Never read the terminal: FFmpeg would otherwise wait on an overwrite prompt or a keypress.
    "-nostdin",
    "-y",
    // FFmpeg reads only the local file: an HLS or concat source cannot make it open other files or URLs.
    "-protocol_whitelist",
    "file",
    "-i",
    input,
    "-loglevel",
    logLevel,
    // Machine-readable key=value progress on stdout (out_time_us), and no human stats line.
    "-progress",
    "pipe:1",
    "-nostats",
  ];
}

export function requireVideo(ctx: BuildContext): VideoStreamInfo {
  if (!ctx.probe.video) throw new PermanentJobError(`The source has no video stream; preset ${ctx.presetId} needs one.`);
  return ctx.probe.video;
}

export function requireAudio(ctx: BuildContext): AudioStreamInfo {
  const audio = ctx.probe.audio[0];
  if (!audio) throw new PermanentJobError(`The source has no audio stream; preset ${ctx.presetId} needs one.`);
  return audio;
}

export function fpsOf(video: VideoStreamInfo): number {
  return video.fps ?? FALLBACK_FPS;
}

/** Frames in the source: the container's count when it has one, else duration × rate. */
export function frameCountOf(video: VideoStreamInfo, duration: number): number {
  return video.frameCount ?? Math.max(1, Math.floor(duration * fpsOf(video)));
}

/** Mono stays mono (no fake stereo), stereo stays, anything wider is downmixed. */
export function outputChannels(audio: AudioStreamInfo): number {
  return Math.min(audio.channels, MAX_AUDIO_CHANNELS);
}

/** Audio of video outputs: stereo at 48 kHz, what every web and mobile player expects. */
export function videoAudioFormat(codec: "aac" | "libopus" = "aac"): string[] {
  return ["-c:a", codec, "-ar", "48000", "-ac", "2"];
}

export function videoAudioArgs(bitrate: number, codec: "aac" | "libopus" = "aac"): string[] {
  return [...videoAudioFormat(codec), "-b:a", `${bitrate}k`];
}

/** Moves the index before the media so playback starts before the download ends. */
export const FASTSTART = ["-movflags", "+faststart"];
