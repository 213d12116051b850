/**
 * The 23-preset catalogue. The spec fixes eleven identifiers and every count; the architecture
 * document completes it. `test/domain/catalogue.test.ts` recomputes each published count.
 */
import type { PlanId } from "../plans";

export const PRESET_CATEGORIES = [
  "standard",
  "premium",
  "advanced",
  "streaming",
  "live",
  "social",
  "audio",
  "utility",
] as const;
export type PresetCategory = (typeof PRESET_CATEGORIES)[number];

export const PRESET_TYPES = ["vod", "streaming_vod", "live", "audio", "utility", "filter"] as const;
export type PresetType = (typeof PRESET_TYPES)[number];

/** Whether `outputUrl` points at one media file or at a ZIP of many (spec, Output form by preset). */
export type OutputForm = "file" | "zip";

export interface PresetSpecifications {
  videoCodec?: string;
  audioCodec?: string;
  resolution?: string;
  maxrate?: string;
  crf?: number;
}

export interface PresetDefinition {
  id: string;
  name: string;
  category: PresetCategory;
  type: PresetType;
  requiredPlan: PlanId;
  output: OutputForm;
  /** File extension of the single output, or "zip". */
  extension: string;
  specifications: PresetSpecifications;
  estimatedProcessingTime: string;
}

export const PRESETS: readonly PresetDefinition[] = [
  {
    id: "mp4_264_240p",
    name: "MP4 H.264 240p",
    category: "standard",
    type: "vod",
    requiredPlan: "free",
    output: "file",
    extension: "mp4",
    specifications: { videoCodec: "libx264", audioCodec: "aac", resolution: "426x240", maxrate: "400k", crf: 26 },
    estimatedProcessingTime: "1-2 minutes",
  },
  {
    id: "mp4_264_480p",
    name: "MP4 H.264 480p",
    category: "standard",
    type: "vod",
    requiredPlan: "free",
    output: "file",
    extension: "mp4",
    specifications: { videoCodec: "libx264", audioCodec: "aac", resolution: "854x480", maxrate: "1400k", crf: 24 },
    estimatedProcessingTime: "1-3 minutes",
  },
  {
    id: "mp4_264_720p",
    name: "MP4 H.264 720p",
    category: "standard",
    type: "vod",
    requiredPlan: "free",
    output: "file",
    extension: "mp4",
    specifications: { videoCodec: "libx264", audioCodec: "aac", resolution: "1280x720", maxrate: "3000k", crf: 23 },
    estimatedProcessingTime: "2-4 minutes",
  },
  {
    id: "hls_abr_264_basic",
    name: "HLS adaptive H.264, up to 720p",
    category: "streaming",
    type: "streaming_vod",
    requiredPlan: "free",
    output: "zip",
    extension: "zip",
    specifications: { videoCodec: "libx264", audioCodec: "aac" },
    estimatedProcessingTime: "3-6 minutes",
  },
  {
    id: "audio_aac_podcast",
    name: "Podcast audio, AAC, loudness-normalised",
    category: "audio",
    type: "audio",
    requiredPlan: "free",
    output: "file",
    extension: "m4a",
    specifications: { audioCodec: "aac" },
    estimatedProcessingTime: "1-2 minutes",
  },
  {
    id: "util_thumbnails",
    name: "Thumbnails (JPEG)",
    category: "utility",
    type: "utility",
    requiredPlan: "free",
    output: "zip",
    extension: "zip",
    specifications: { videoCodec: "mjpeg" },
    estimatedProcessingTime: "under 1 minute",
  },
  {
    id: "util_subs_sidecar_basic",
    name: "MP4 with WebVTT subtitle sidecars",
    category: "utility",
    type: "utility",
    requiredPlan: "free",
    output: "zip",
    extension: "zip",
    specifications: { videoCodec: "libx264", audioCodec: "aac" },
    estimatedProcessingTime: "2-4 minutes",
  },
  {
    id: "mp4_264_1080p",
    name: "MP4 H.264 1080p",
    category: "premium",
    type: "vod",
    requiredPlan: "pro",
    output: "file",
    extension: "mp4",
    specifications: { videoCodec: "libx264", audioCodec: "aac", resolution: "1920x1080", maxrate: "6000k", crf: 22 },
    estimatedProcessingTime: "3-6 minutes",
  },
  {
    id: "hls_abr_264_standard",
    name: "HLS adaptive H.264, up to 1080p",
    category: "streaming",
    type: "streaming_vod",
    requiredPlan: "pro",
    output: "zip",
    extension: "zip",
    specifications: { videoCodec: "libx264", audioCodec: "aac" },
    estimatedProcessingTime: "4-8 minutes",
  },
  {
    id: "social_264_vertical_1080x1920",
    name: "Social vertical 9:16 (1080x1920)",
    category: "social",
    type: "vod",
    requiredPlan: "pro",
    output: "file",
    extension: "mp4",
    specifications: { videoCodec: "libx264", audioCodec: "aac", resolution: "1080x1920", maxrate: "6000k", crf: 22 },
    estimatedProcessingTime: "3-6 minutes",
  },
  {
    id: "social_264_square_1080",
    name: "Social square 1:1 (1080x1080)",
    category: "social",
    type: "vod",
    requiredPlan: "pro",
    output: "file",
    extension: "mp4",
    specifications: { videoCodec: "libx264", audioCodec: "aac", resolution: "1080x1080", maxrate: "5000k", crf: 22 },
    estimatedProcessingTime: "2-5 minutes",
  },
  {
    id: "audio_mp3_hq",
    name: "MP3 high quality",
    category: "audio",
    type: "audio",
    requiredPlan: "pro",
    output: "file",
    extension: "mp3",
    specifications: { audioCodec: "libmp3lame" },
    estimatedProcessingTime: "1-2 minutes",
  },
  {
    id: "util_sprite_vtt",
    name: "Sprite sheet with WebVTT thumbnail track",
    category: "utility",
    type: "utility",
    requiredPlan: "pro",
    output: "zip",
    extension: "zip",
    specifications: { videoCodec: "mjpeg" },
    estimatedProcessingTime: "under 1 minute",
  },
  {
    id: "mp4_265_1080p_efficient",
    name: "MP4 HEVC 1080p, efficient",
    category: "advanced",
    type: "vod",
    requiredPlan: "business",
    output: "file",
    extension: "mp4",
    specifications: { videoCodec: "libx265", audioCodec: "aac", resolution: "1920x1080", crf: 26 },
    estimatedProcessingTime: "8-15 minutes",
  },
  {
    id: "webm_vp9_1080p",
    name: "WebM VP9 1080p",
    category: "advanced",
    type: "vod",
    requiredPlan: "business",
    output: "file",
    extension: "webm",
    specifications: { videoCodec: "libvpx-vp9", audioCodec: "libopus", resolution: "1920x1080", maxrate: "4000k", crf: 31 },
    estimatedProcessingTime: "10-20 minutes",
  },
  {
    id: "dash_abr_264_standard",
    name: "DASH adaptive H.264, up to 1080p",
    category: "streaming",
    type: "streaming_vod",
    requiredPlan: "business",
    output: "zip",
    extension: "zip",
    specifications: { videoCodec: "libx264", audioCodec: "aac" },
    estimatedProcessingTime: "4-8 minutes",
  },
  {
    id: "filter_loudnorm_ebu_r128",
    name: "Loudness normalisation (EBU R128)",
    category: "advanced",
    type: "filter",
    requiredPlan: "business",
    output: "file",
    extension: "mp4",
    specifications: { videoCodec: "copy", audioCodec: "aac" },
    estimatedProcessingTime: "1-2 minutes",
  },
  {
    id: "filter_audio_denoise",
    name: "Audio denoise",
    category: "advanced",
    type: "filter",
    requiredPlan: "business",
    output: "file",
    extension: "mp4",
    specifications: { videoCodec: "copy", audioCodec: "aac" },
    estimatedProcessingTime: "1-3 minutes",
  },
  {
    id: "live_hls_264_lowlatency",
    name: "Low-latency event HLS, H.264",
    category: "live",
    type: "live",
    requiredPlan: "business",
    output: "zip",
    extension: "zip",
    specifications: { videoCodec: "libx264", audioCodec: "aac" },
    estimatedProcessingTime: "2-5 minutes",
  },
  {
    id: "hls_abr_265_efficient_4k",
    name: "HLS adaptive HEVC, up to 2160p",
    category: "streaming",
    type: "streaming_vod",
    requiredPlan: "enterprise",
    output: "zip",
    extension: "zip",
    specifications: { videoCodec: "libx265", audioCodec: "aac" },
    estimatedProcessingTime: "20-40 minutes",
  },
  {
    id: "cmaf_abr_265_standard",
    name: "CMAF HEVC with HLS and DASH manifests",
    category: "advanced",
    type: "streaming_vod",
    requiredPlan: "enterprise",
    output: "zip",
    extension: "zip",
    specifications: { videoCodec: "libx265", audioCodec: "aac" },
    estimatedProcessingTime: "15-30 minutes",
  },
  {
    id: "hls_abr_av1_efficient",
    name: "HLS adaptive AV1 (SVT-AV1)",
    category: "advanced",
    type: "streaming_vod",
    requiredPlan: "enterprise",
    output: "zip",
    extension: "zip",
    specifications: { videoCodec: "libsvtav1", audioCodec: "aac" },
    estimatedProcessingTime: "10-25 minutes",
  },
  {
    id: "live_dash_264_lowlatency",
    name: "Low-latency DASH, H.264",
    category: "live",
    type: "live",
    requiredPlan: "enterprise",
    output: "zip",
    extension: "zip",
    specifications: { videoCodec: "libx264", audioCodec: "aac" },
    estimatedProcessingTime: "2-5 minutes",
  },
];

const BY_ID = new Map(PRESETS.map((p) => [p.id, p]));

export function findPreset(id: string): PresetDefinition | undefined {
  return BY_ID.get(id);
}

export const PRESET_IDS: readonly string[] = PRESETS.map((p) => p.id);

/** Timeline jobs are stored as jobs under this preset name (spec, What the service does). */
export const EDL_PRESET_ID = "edl_custom";
