/**
 * How each of the 23 presets is encoded: the settings behind the public catalogue. Pure data;
 * the encoder turns it into FFmpeg arguments and the README documents it. The catalogue's
 * `specifications` (resolution, CRF, maxrate) stay the one source of those values: recipes add
 * only what the contract does not show.
 *
 * Speed settings were chosen for throughput on 2 cores (design/ffmpeg-notes.md): x264 and
 * x265 `veryfast` (x264 `faster` is a big step down in speed for little gain), VP9 good
 * deadline at cpu-used 5, SVT-AV1 preset 10.
 */
import type { EncoderPreset } from "../edl/schema";

/** Bitrates in kbit/s. */
export interface Rung {
  height: number;
  videoBitrate: number;
  /** At most 1.1 × videoBitrate: HLS writes BANDWIDTH as 1.1 × the average, so it covers the peak. */
  maxrate: number;
  bufsize: number;
  audioBitrate: number;
}

/** A video encoder and its speed: presets use the fixed ones below, timelines choose theirs. */
export type VideoEncoder =
  | { codec: "libx264"; preset: EncoderPreset }
  | { codec: "libx265"; preset: EncoderPreset }
  | { codec: "libsvtav1"; preset: number }
  | { codec: "libvpx-vp9"; deadline: "good" | "realtime"; cpuUsed: number };

const X264 = { codec: "libx264", preset: "veryfast" } as const;
const X265 = { codec: "libx265", preset: "veryfast" } as const;
const SVTAV1 = { codec: "libsvtav1", preset: 10 } as const;
const VP9 = { codec: "libvpx-vp9", deadline: "good", cpuUsed: 5 } as const;

/**
 * - `contain`: fit inside the catalogue resolution keeping the aspect ratio (a 16:9 source
 *   fills it exactly; others come out smaller on one side, never letterboxed).
 * - `cover`: fill the resolution exactly, cropping the centre (social formats).
 */
export type Fit = "contain" | "cover";

export interface ProgressiveRecipe {
  kind: "progressive";
  video: VideoEncoder;
  fit: Fit;
  /** VBV buffer as a multiple of the catalogue maxrate. */
  bufsizeFactor: number;
  audio: { codec: "aac" | "libopus"; bitrate: number };
}

export type Packaging =
  | { format: "hls"; segmentSeconds: number; segmentType: "mpegts" | "fmp4"; playlist: "vod" | "event" }
  | { format: "dash"; segmentSeconds: number; lowLatency: boolean }
  /** One fMP4 segment set described by both a DASH MPD and an HLS master playlist. */
  | { format: "cmaf"; segmentSeconds: number };

export interface LadderRecipe {
  kind: "ladder";
  video: VideoEncoder;
  /** Highest first. Rungs above the source height are dropped (see selectRungs). */
  rungs: readonly Rung[];
  /** Keyframe interval; segments are whole multiples of it so every rung's segments align. */
  gopSeconds: number;
  packaging: Packaging;
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
  loudness: LoudnessTarget;
  /** AAC bitrate by output channel count: speech needs half the bits in mono. */
  bitrateMono: number;
  bitrateStereo: number;
}

export interface Mp3Recipe {
  kind: "mp3";
  /** LAME VBR quality 0 (V0, ~245 kbit/s): transparent and smaller than 320k CBR. */
  vbrQuality: number;
}

/** Video stream copied; only the audio is processed. */
export interface AudioFilterRecipe {
  kind: "audio-filter";
  filter: { type: "loudnorm"; loudness: LoudnessTarget } | { type: "denoise"; afftdn: string };
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
  video: typeof X264;
  maxWidth: number;
  maxHeight: number;
  crf: number;
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

const rung = (height: number, videoBitrate: number, audioBitrate: number, bufsizeFactor = 1.5): Rung => ({
  height,
  videoBitrate,
  maxrate: Math.round(videoBitrate * 1.07),
  bufsize: Math.round(videoBitrate * bufsizeFactor),
  audioBitrate,
});

const H264_LADDER = {
  1080: rung(1080, 5000, 128),
  720: rung(720, 2800, 128),
  480: rung(480, 1400, 96),
  360: rung(360, 800, 96),
};

// HEVC needs about 60–70% of H.264's bits for the same quality; AV1 about half.
const HEVC_LADDER = {
  2160: rung(2160, 12000, 128),
  1440: rung(1440, 6500, 128),
  1080: rung(1080, 3500, 128),
  720: rung(720, 1800, 128),
  480: rung(480, 900, 96),
};

// Live rungs keep a one-second VBV buffer: a low-latency player holds little in its buffer.
const LIVE_LADDER = [rung(720, 2800, 128, 1), rung(480, 1400, 96, 1), rung(360, 800, 96, 1)];

const progressive = (video: VideoEncoder, fit: Fit, audioBitrate: number, audioCodec: "aac" | "libopus" = "aac"): ProgressiveRecipe => ({
  kind: "progressive",
  video,
  fit,
  bufsizeFactor: 2,
  audio: { codec: audioCodec, bitrate: audioBitrate },
});

const PODCAST_LOUDNESS: LoudnessTarget = { integrated: -16, truePeak: -1.5, range: 11 };
const EBU_R128_LOUDNESS: LoudnessTarget = { integrated: -23, truePeak: -1, range: 20 };

export const RECIPES: Readonly<Record<string, PresetRecipe>> = {
  mp4_264_240p: progressive(X264, "contain", 64),
  mp4_264_480p: progressive(X264, "contain", 96),
  mp4_264_720p: progressive(X264, "contain", 128),
  mp4_264_1080p: progressive(X264, "contain", 128),
  mp4_265_1080p_efficient: progressive(X265, "contain", 128),
  webm_vp9_1080p: progressive(VP9, "contain", 128, "libopus"),
  social_264_vertical_1080x1920: progressive(X264, "cover", 128),
  social_264_square_1080: progressive(X264, "cover", 128),

  hls_abr_264_basic: {
    kind: "ladder",
    video: X264,
    rungs: [H264_LADDER[720], H264_LADDER[480], H264_LADDER[360]],
    gopSeconds: 2,
    packaging: { format: "hls", segmentSeconds: 6, segmentType: "mpegts", playlist: "vod" },
  },
  hls_abr_264_standard: {
    kind: "ladder",
    video: X264,
    rungs: [H264_LADDER[1080], H264_LADDER[720], H264_LADDER[480], H264_LADDER[360]],
    gopSeconds: 2,
    packaging: { format: "hls", segmentSeconds: 6, segmentType: "mpegts", playlist: "vod" },
  },
  dash_abr_264_standard: {
    kind: "ladder",
    video: X264,
    rungs: [H264_LADDER[1080], H264_LADDER[720], H264_LADDER[480], H264_LADDER[360]],
    gopSeconds: 2,
    packaging: { format: "dash", segmentSeconds: 4, lowLatency: false },
  },
  // HEVC and AV1 in HLS need fMP4 segments (Apple does not play HEVC in TS; AV1 has no TS mapping).
  hls_abr_265_efficient_4k: {
    kind: "ladder",
    video: X265,
    rungs: [HEVC_LADDER[2160], HEVC_LADDER[1440], HEVC_LADDER[1080], HEVC_LADDER[720], HEVC_LADDER[480]],
    gopSeconds: 2,
    packaging: { format: "hls", segmentSeconds: 6, segmentType: "fmp4", playlist: "vod" },
  },
  cmaf_abr_265_standard: {
    kind: "ladder",
    video: X265,
    rungs: [HEVC_LADDER[1080], HEVC_LADDER[720], HEVC_LADDER[480]],
    gopSeconds: 2,
    packaging: { format: "cmaf", segmentSeconds: 4 },
  },
  hls_abr_av1_efficient: {
    kind: "ladder",
    video: SVTAV1,
    rungs: [rung(1080, 2500, 128), rung(720, 1300, 128), rung(480, 700, 96), rung(360, 400, 96)],
    gopSeconds: 2,
    packaging: { format: "hls", segmentSeconds: 6, segmentType: "fmp4", playlist: "vod" },
  },
  live_hls_264_lowlatency: {
    kind: "ladder",
    video: X264,
    rungs: LIVE_LADDER,
    gopSeconds: 1,
    packaging: { format: "hls", segmentSeconds: 2, segmentType: "fmp4", playlist: "event" },
  },
  live_dash_264_lowlatency: {
    kind: "ladder",
    video: X264,
    rungs: LIVE_LADDER,
    gopSeconds: 1,
    packaging: { format: "dash", segmentSeconds: 1, lowLatency: true },
  },

  audio_aac_podcast: { kind: "podcast", loudness: PODCAST_LOUDNESS, bitrateMono: 64, bitrateStereo: 128 },
  audio_mp3_hq: { kind: "mp3", vbrQuality: 0 },

  filter_loudnorm_ebu_r128: { kind: "audio-filter", filter: { type: "loudnorm", loudness: EBU_R128_LOUDNESS }, audioBitrate: 192 },
  // afftdn is built in (arnndn needs a model file we would have to ship); tn=1 tracks a noise
  // floor that changes over the recording, nf=-40 suits room noise under speech.
  filter_audio_denoise: { kind: "audio-filter", filter: { type: "denoise", afftdn: "afftdn=nr=12:nf=-40:tn=1" }, audioBitrate: 192 },

  util_thumbnails: { kind: "thumbnails", secondsPerThumbnail: 10, min: 5, max: 30, maxWidth: 640, jpegQuality: 3 },
  util_sprite_vtt: { kind: "sprite", tileWidth: 160, columns: 10, maxTiles: 100, minIntervalSeconds: 1, jpegQuality: 4 },
  util_subs_sidecar_basic: { kind: "subtitle-sidecars", video: X264, maxWidth: 1920, maxHeight: 1080, crf: 23, audioBitrate: 128 },
};

export function recipeFor(presetId: string): PresetRecipe {
  const recipe = RECIPES[presetId];
  if (!recipe) throw new Error(`No encoding recipe for preset ${presetId}`);
  return recipe;
}

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
