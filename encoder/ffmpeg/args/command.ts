import type { AudioStreamInfo, ProbeSummary, VideoStreamInfo } from "../probe";
import { MAX_AUDIO_CHANNELS } from "../../../domain/presets/recipes";
import { JobFailure } from "../../failure";
import { MAX_PICTURE_PIXELS } from "../picture-limits";

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
const FALLBACK_FPS = 30;

/** One input of a command: its local path and the options that apply to it (seek, length, loop…). */
export interface FfmpegInput {
  path: string;
  options?: readonly string[];
  /**
   * The path is the encoder's loopback proxy of a source read by ranges (source/ranged.ts): read
   * over http, by a container demuxer only.
   */
  ranged?: boolean;
}

/**
 * The demuxers a ranged source may be read with: containers of media alone (mov is MP4's,
 * matroska WebM's), so no playlist or manifest demuxer can open and make FFmpeg open another URL.
 */
const RANGED_FORMATS = [
  "mov",
  "matroska",
  "mpegts",
  "avi",
  "flv",
  "mxf",
  "ogg",
  "asf",
  "nut",
  "mpeg",
  "wav",
  "mp3",
  "aac",
];

/** The input FFmpeg reads from its standard input: a split part's piece, fed as it downloads. */
export const STDIN_INPUT = "pipe:0";

/**
 * FFmpeg reads only the local file (for STDIN_INPUT, the bytes the encoder feeds it; for a ranged
 * input, the encoder's proxy with a container demuxer): an HLS or concat source cannot make it
 * open other files or URLs. Its decoders refuse a picture over the size limit, a later frame as
 * much as the first the probe saw (a PNG or Matroska stream may change size at any frame);
 * run.ts turns their refusal into the job's failure.
 */
export function inputArgs(input: FfmpegInput): string[] {
  const protocols = input.ranged ? "http,tcp" : input.path === STDIN_INPUT ? "pipe" : "file";
  return [
    "-protocol_whitelist",
    protocols,
    ...(input.ranged ? ["-format_whitelist", RANGED_FORMATS.join(",")] : []),
    "-max_pixels",
    String(MAX_PICTURE_PIXELS),
    ...(input.options ?? []),
    "-i",
    input.path,
  ];
}

/**
 * The head every command shares, for one source path or several inputs (a timeline's clips and
 * images). `logLevel` is "info" only where a filter reports at that level (loudnorm's
 * measurement); elsewhere warnings and errors are all the stderr we keep.
 */
export function head(inputs: string | readonly FfmpegInput[], logLevel: "warning" | "info" = "warning"): string[] {
  const list = typeof inputs === "string" ? [{ path: inputs }] : inputs;
  return [
    "-hide_banner",
    // Never read the terminal: FFmpeg would otherwise wait on an overwrite prompt or a keypress.
    "-nostdin",
    "-y",
    ...list.flatMap(inputArgs),
    "-loglevel",
    logLevel,
    // Machine-readable key=value progress on stdout (out_time_us), and no human stats line.
    "-progress",
    "pipe:1",
    "-nostats",
  ];
}

export function requireVideo(ctx: BuildContext): VideoStreamInfo {
  if (!ctx.probe.video)
    throw JobFailure.unsuitableSource(`The source has no video stream; preset ${ctx.presetId} needs one.`);
  return ctx.probe.video;
}

export function requireAudio(ctx: BuildContext): AudioStreamInfo {
  const audio = ctx.probe.audio[0];
  if (!audio) throw JobFailure.unsuitableSource(`The source has no audio stream; preset ${ctx.presetId} needs one.`);
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

/** An FFmpeg audio encoder a video output can carry. */
export type AudioEncoderName = "aac" | "libopus" | "libmp3lame";

/** Audio of video outputs: stereo at 48 kHz, what every web and mobile player expects. */
export function videoAudioFormat(codec: AudioEncoderName): string[] {
  return ["-c:a", codec, "-ar", "48000", "-ac", "2"];
}

/** `bitrate` as FFmpeg takes it, e.g. "128k" (see kbit). */
export function videoAudioArgs(codec: AudioEncoderName, bitrate: string): string[] {
  return [...videoAudioFormat(codec), "-b:a", bitrate];
}

/** Kilobits per second as FFmpeg's rate options take them. */
export const kbit = (kbps: number) => `${kbps}k`;
