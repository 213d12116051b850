/**
 * What the encoder needs to know to make each kind of preset: pure data (numbers, and the
 * names of FFmpeg's encoders), no arguments. Every preset's values are in definitions.ts;
 * the catalogue shows some of them and the encoder turns all of them into FFmpeg arguments.
 */
import type { EncoderPreset } from "../edl/validated-edl";

/** Bitrates in kbit/s. */
export interface Rung {
  height: number;
  videoBitrate: number;
  /** At most 1.1 × videoBitrate: HLS writes BANDWIDTH as 1.1 × the average, so it covers the peak. */
  maxrate: number;
  bufsize: number;
  audioBitrate: number;
}

/** A video encoder and its speed: each preset fixes its own (definitions.ts), a timeline chooses. */
export type VideoEncoder =
  | { codec: "libx264"; preset: EncoderPreset }
  | { codec: "libx265"; preset: EncoderPreset }
  | { codec: "libsvtav1"; preset: number }
  | { codec: "libvpx-vp9"; deadline: "good" | "realtime"; cpuUsed: number };

/**
 * - `contain`: fit inside the preset's size keeping the aspect ratio (a 16:9 source
 *   fills it exactly; others come out smaller on one side, never letterboxed).
 * - `cover`: fill the size exactly, cropping the centre (social formats).
 */
type Fit = "contain" | "cover";

/** One video file at a fixed size: MP4 (H.264, HEVC) or WebM (VP9 + Opus). */
export interface ProgressiveRecipe {
  kind: "progressive";
  container: "mp4" | "webm";
  video: VideoEncoder;
  size: { width: number; height: number };
  fit: Fit;
  crf: number;
  /** kbit/s: the VBV cap on the CRF (for VP9, the constrained-quality ceiling). None: CRF alone. */
  maxrate?: number;
  /** VBV buffer as a multiple of maxrate. */
  bufsizeFactor: number;
  audioCodec: "aac" | "libopus";
  audioBitrate: number;
}

type Packaging =
  | { format: "hls"; segmentSeconds: number; segmentType: "mpegts" | "fmp4"; playlist: "vod" | "event" }
  | { format: "dash"; segmentSeconds: number; lowLatency: boolean }
  /** One fMP4 segment set described by both a DASH MPD and an HLS master playlist. */
  | { format: "cmaf"; segmentSeconds: number };

/**
 * The HLS master playlist at the root of a ladder's ZIP (HLS and CMAF packaging): what a player
 * opens first. The encoder names it so, and the dashboard plays a ladder from it.
 */
export const HLS_MASTER_PLAYLIST = "master.m3u8";

export interface LadderRecipe {
  kind: "ladder";
  video: VideoEncoder;
  /** Highest first. Rungs above the source height are dropped (see selectRungs). */
  rungs: readonly Rung[];
  /** Keyframe interval; segments are whole multiples of it so every rung's segments align. */
  gopSeconds: number;
  packaging: Packaging;
  audioCodec: "aac";
}

export interface LoudnessTarget {
  /** Integrated loudness, LUFS. */
  integrated: number;
  /** Maximum true peak, dBTP. */
  truePeak: number;
  /**
   * Loudness range target, LU. The apply pass raises it above the measured range, because
   * loudnorm silently switches to dynamic (compressing) mode when the measured LRA exceeds it.
   */
  range: number;
}

/** Channel rule for audio outputs: keep mono as mono, keep stereo, downmix anything wider. */
export const MAX_AUDIO_CHANNELS = 2;

export interface PodcastRecipe {
  kind: "podcast";
  container: "m4a";
  audioCodec: "aac";
  loudness: LoudnessTarget;
  /** AAC bitrate by output channel count: speech needs half the bits in mono. */
  bitrateMono: number;
  bitrateStereo: number;
}

export interface Mp3Recipe {
  kind: "mp3";
  container: "mp3";
  audioCodec: "libmp3lame";
  /** LAME VBR quality 0 (V0, ~245 kbit/s): transparent and smaller than 320k CBR. */
  vbrQuality: number;
}

/** Video stream copied; only the audio is processed. */
export interface AudioFilterRecipe {
  kind: "audio-filter";
  container: "mp4";
  filter: { type: "loudnorm"; loudness: LoudnessTarget } | { type: "denoise"; afftdn: string };
  audioCodec: "aac";
  audioBitrate: number;
}

export interface ThumbnailsRecipe {
  kind: "thumbnails";
  /** One thumbnail per this many seconds of source, clamped to [min, max]. */
  secondsPerThumbnail: number;
  min: number;
  max: number;
  maxWidth: number;
  jpegQuality: number;
}

export interface SpriteRecipe {
  kind: "sprite";
  tileWidth: number;
  columns: number;
  /** One sheet: the interval grows with the duration so the tiles never exceed this. */
  maxTiles: number;
  minIntervalSeconds: number;
  jpegQuality: number;
}

export interface SubtitleSidecarRecipe {
  kind: "subtitle-sidecars";
  /** The MP4 is re-encoded (any source codec, web-playable out), at most this size, never upscaled. */
  video: Extract<VideoEncoder, { codec: "libx264" }>;
  maxWidth: number;
  maxHeight: number;
  crf: number;
  audioCodec: "aac";
  audioBitrate: number;
}

export type PresetRecipe =
  | ProgressiveRecipe
  | LadderRecipe
  | PodcastRecipe
  | Mp3Recipe
  | AudioFilterRecipe
  | ThumbnailsRecipe
  | SpriteRecipe
  | SubtitleSidecarRecipe;

/**
 * The rungs a source of `sourceHeight` pixels gets: never upscaled, so rungs above the source
 * are dropped, but the lowest rung always stays (at most the source's height, kept even).
 */
export function selectRungs(rungs: readonly Rung[], sourceHeight: number): Rung[] {
  const kept = rungs.filter((r) => r.height <= sourceHeight);
  if (kept.length > 0) return kept;
  const lowest = rungs[rungs.length - 1];
  return [{ ...lowest, height: Math.min(lowest.height, Math.max(2, sourceHeight - (sourceHeight % 2))) }];
}
