import { JobFailure } from "../failure";
import { assertSelfContainedFormat } from "../source/self-contained";
import { type FfmpegInput, inputArgs } from "./args/command";
import { pictureTooLarge, refusedPictureSize, withinPictureLimits } from "./picture-limits";
import { runFfprobe, type RunOptions } from "./run";

export interface VideoStreamInfo {
  /** Absolute stream index, for `-map 0:<index>`. */
  index: number;
  codec: string;
  /** As displayed: width and height are swapped for sources rotated by 90° (phones). */
  width: number;
  height: number;
  /** Sample (pixel) aspect ratio: 1 for square pixels, e.g. 32/27 for anamorphic 16:9 DVD. */
  sampleAspect: number;
  /** Null when the container does not say (the builders then assume 30). */
  fps: number | null;
  /** Frames in the stream when the container records it, for exact frame selection. */
  frameCount: number | null;
}

export interface AudioStreamInfo {
  index: number;
  codec: string;
  channels: number;
  sampleRate: number;
  language: string | null;
}

export interface SubtitleStreamInfo {
  index: number;
  codec: string;
  language: string | null;
  /** Text tracks convert to WebVTT; bitmap tracks (PGS, VobSub, DVB) cannot. */
  textBased: boolean;
}

export interface ProbeSummary {
  duration: number;
  video: VideoStreamInfo | null;
  audio: AudioStreamInfo[];
  subtitles: SubtitleStreamInfo[];
}

const TEXT_SUBTITLE_CODECS = new Set([
  "subrip",
  "srt",
  "ass",
  "ssa",
  "webvtt",
  "mov_text",
  "text",
  "microdvd",
  "subviewer",
  "subviewer1",
  "sami",
  "realtext",
  "jacosub",
  "mpl2",
  "pjs",
  "vplayer",
  "stl",
]);

interface RawStream {
  index?: number;
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  sample_aspect_ratio?: string;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  time_base?: string;
  start_time?: string;
  nb_frames?: string;
  duration?: string;
  bit_rate?: string;
  channels?: number;
  sample_rate?: string;
  tags?: Record<string, string>;
  disposition?: Record<string, number>;
  side_data_list?: { rotation?: number }[];
}

interface RawProbe {
  streams?: RawStream[];
  format?: { duration?: string; format_name?: string; size?: string };
}

/**
 * Refuses an MP4/MOV file cut short. FFmpeg encodes such a file without an error (the samples
 * past the end are "partial file" warnings) into an output that silently stops where the file
 * does. Its index (moov) still lists every sample, and the demuxer derives each stream's
 * bit_rate from their sizes, so Σ bit_rate × duration is the media the file should hold; an
 * intact file holds at least that. The tenth of slack covers edit lists that stretch a
 * stream's duration. A file cut before its index (moov at the end) fails at the probe already.
 */
function assertComplete(probe: RawProbe, streams: RawStream[]): void {
  if (!(probe.format?.format_name ?? "").split(",").includes("mov")) return;
  const fileBytes = positive(probe.format?.size);
  const indexedBytes = streams.reduce(
    (sum, s) => sum + ((positive(s.bit_rate) ?? 0) * (positive(s.duration) ?? 0)) / 8,
    0,
  );
  if (!fileBytes || indexedBytes <= fileBytes * 1.1) return;
  const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  throw JobFailure.sourceRefused(
    `the file is truncated: its index lists ${mib(indexedBytes)} of media, but the file holds ${mib(fileBytes)} in all.`,
  );
}

function rate(value: string | undefined, separator = "/"): number | null {
  if (!value) return null;
  const [num, den = "1"] = value.split(separator);
  const r = Number(num) / Number(den);
  return Number.isFinite(r) && r > 0 ? r : null;
}

function positive(value: string | number | undefined): number | null {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** Degrees the picture is turned, from its display matrix or its rotate tag (signed, as stored). */
function turnedBy(stream: RawStream): number {
  const fromSideData = stream.side_data_list?.find((s) => typeof s.rotation === "number")?.rotation;
  return fromSideData ?? Number(stream.tags?.rotate ?? 0);
}

/** 90 when width and height swap on display, else 0. */
function rotation(stream: RawStream): number {
  return Math.abs(turnedBy(stream)) % 180;
}

function language(stream: RawStream): string | null {
  const lang = stream.tags?.language;
  return lang && lang !== "und" ? lang : null;
}

/**
 * Refuses a picture over the limits. `stream` is the one that would be decoded; when it has no
 * size, ffprobe's log says whether that is because its decoder refused an oversized picture
 * (over `-max_pixels`, or over FFmpeg's own bound, "is invalid").
 */
function assertPictureSize(stream: RawStream | undefined, log: readonly string[], what: "video" | "image"): void {
  let size = stream?.width && stream.height ? { width: stream.width, height: stream.height } : undefined;
  if (stream && !size) size = log.map(refusedPictureSize).find((refused) => refused !== null) ?? undefined;
  if (!size || withinPictureLimits(size.width, size.height)) return;
  throw pictureTooLarge(`the ${what}`, size.width, size.height);
}

/**
 * The summary the preset builders need, from `ffprobe -print_format json -show_format -show_streams`
 * and the lines ffprobe logged. A playlist or manifest is refused here, whatever its head looked
 * like: FFmpeg would read the files it names. So is a picture over the size limits.
 */
export function parseProbe(raw: unknown, log: readonly string[] = []): ProbeSummary {
  const probe = raw as RawProbe;
  assertSelfContainedFormat(probe.format?.format_name);
  const streams = probe.streams ?? [];
  // Cover art in audio files is a video stream flagged attached_pic: not a picture to encode.
  const v = streams.find((s) => s.codec_type === "video" && !s.disposition?.attached_pic);
  assertPictureSize(v, log, "video");
  assertComplete(probe, streams);
  const video: VideoStreamInfo | null =
    v?.width && v.height
      ? {
          index: v.index ?? 0,
          codec: v.codec_name ?? "unknown",
          width: rotation(v) === 90 ? v.height : v.width,
          height: rotation(v) === 90 ? v.width : v.height,
          sampleAspect: rate(v.sample_aspect_ratio, ":") ?? 1,
          fps: rate(v.avg_frame_rate) ?? rate(v.r_frame_rate),
          frameCount: positive(v.nb_frames),
        }
      : null;
  const audio = streams
    .filter((s) => s.codec_type === "audio")
    .map((s) => ({
      index: s.index ?? 0,
      codec: s.codec_name ?? "unknown",
      channels: s.channels ?? 2,
      sampleRate: positive(s.sample_rate) ?? 48000,
      language: language(s),
    }));
  const subtitles = streams
    .filter((s) => s.codec_type === "subtitle")
    .map((s) => ({
      index: s.index ?? 0,
      codec: s.codec_name ?? "unknown",
      language: language(s),
      textBased: TEXT_SUBTITLE_CODECS.has(s.codec_name ?? ""),
    }));
  const duration = positive(probe.format?.duration) ?? Math.max(0, ...streams.map((s) => positive(s.duration) ?? 0));
  if (!(duration > 0)) throw JobFailure.ffmpeg("FFmpeg could not determine the duration of the source file.");
  if (!video && audio.length === 0)
    throw JobFailure.ffmpeg("FFmpeg found no audio or video stream in the source file.");
  return { duration, video, audio, subtitles };
}

/**
 * ffprobe's JSON report on a local file, or a ranged source's loopback proxy (never any other
 * URL: the input's protocols are whitelisted), and its log. Its decoders refuse pictures over
 * the pixel limit.
 */
async function probeJson(
  input: string | FfmpegInput,
  options: RunOptions,
): Promise<{ probe: RawProbe; log: string[] }> {
  const { stdout, stderrLines } = await runFfprobe(
    [
      "-v",
      "error",
      "-print_format",
      "json",
      "-show_format",
      "-show_streams",
      ...inputArgs(typeof input === "string" ? { path: input } : input),
    ],
    options,
  );
  return { probe: JSON.parse(stdout) as RawProbe, log: stderrLines };
}

/** A stream's clock as ffprobe gives it, which a split reads beyond the summary (encoder/split/facts.ts). */
interface StreamClock {
  index: number;
  /** r_frame_rate and time_base, as fractions ("30000/1001"). */
  frameRate: string | undefined;
  timeBase: string | undefined;
  /** Seconds, on the file's clock. */
  startTime: string | undefined;
  /** Degrees the picture is turned, from its display matrix or its rotate tag. */
  rotation: number;
}

/** A source probed: its summary, and every stream's clock. */
export interface ProbedSource {
  probe: ProbeSummary;
  clocks: StreamClock[];
}

/** Probes a media file (local, or a ranged source): its summary, with the streams' clocks from the same run of ffprobe. */
export async function probeSource(input: string | FfmpegInput, options: RunOptions = {}): Promise<ProbedSource> {
  const { probe, log } = await probeJson(input, options);
  return {
    probe: parseProbe(probe, log),
    clocks: (probe.streams ?? []).map((s) => ({
      index: s.index ?? 0,
      frameRate: s.r_frame_rate,
      timeBase: s.time_base,
      startTime: s.start_time,
      rotation: turnedBy(s),
    })),
  };
}

/** Probes a local media file: a source, a timeline clip or its replacement audio. */
export async function probeFile(path: string, options: RunOptions = {}): Promise<ProbeSummary> {
  return (await probeSource(path, options)).probe;
}

export interface ImageStreamInfo {
  codec: string;
  width: number;
  height: number;
}

/**
 * Probes a local still image (a timeline overlay): its first stream, or null when it has none
 * with a size. A playlist or manifest is refused, as in parseProbe, and so is a picture over
 * the size limits (a decompression bomb).
 */
export async function probeImage(path: string, options: RunOptions = {}): Promise<ImageStreamInfo | null> {
  const { probe, log } = await probeJson(path, options);
  assertSelfContainedFormat(probe.format?.format_name);
  const stream = probe.streams?.[0];
  assertPictureSize(stream, log, "image");
  return stream?.width && stream.height
    ? { codec: stream.codec_name ?? "unknown", width: stream.width, height: stream.height }
    : null;
}
