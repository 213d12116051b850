/**
 * The 23 presets, each defined once: what the catalogue lists (name, category, type, plan,
 * time estimate) and how the encoder makes it (its recipe). The public catalogue
 * (catalogue.ts) and the encoder's numbers both come from here, so a preset cannot be listed
 * without being encodable, and the encoder never reads the catalogue's display strings.
 * The contract fixes eleven identifiers and every count (docs/contract.md §3.8); docs/presets.md
 * lists the whole catalogue.
 *
 * Speeds were chosen for throughput on 2 cores: x264 and x265 `veryfast` (x264 `faster` is a
 * big step down in speed for little gain), VP9 good deadline at cpu-used 5, SVT-AV1 preset 10.
 */
import type { PlanId } from "../plans";
import type {
  AudioFilterRecipe,
  LadderRecipe,
  LoudnessTarget,
  Mp3Recipe,
  PodcastRecipe,
  ProgressiveRecipe,
  Rung,
  SpriteRecipe,
  SubtitleSidecarRecipe,
  ThumbnailsRecipe,
} from "./recipes";

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

/** The recipes a preset of each catalogue type can have. */
interface RecipeByType {
  vod: ProgressiveRecipe;
  streaming_vod: LadderRecipe;
  live: LadderRecipe;
  audio: PodcastRecipe | Mp3Recipe;
  utility: ThumbnailsRecipe | SpriteRecipe | SubtitleSidecarRecipe;
  filter: AudioFilterRecipe;
}

/** One preset, discriminated by its catalogue type: a `vod` preset without its resolution, CRF, … is a type error. */
export type PresetDefinition = {
  [T in PresetType]: {
    name: string;
    category: PresetCategory;
    type: T;
    requiredPlan: PlanId;
    estimatedProcessingTime: string;
    recipe: RecipeByType[T];
  };
}[PresetType];

const X264 = { codec: "libx264", preset: "veryfast" } as const;
const X265 = { codec: "libx265", preset: "veryfast" } as const;
const SVTAV1 = { codec: "libsvtav1", preset: 10 } as const;
const VP9 = { codec: "libvpx-vp9", deadline: "good", cpuUsed: 5 } as const;

/** An MP4 fitted inside its size, its VBV buffer twice the maxrate, with AAC. */
const MP4 = { kind: "progressive", container: "mp4", fit: "contain", bufsizeFactor: 2, audioCodec: "aac" } as const;

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

const H264_UP_TO_1080 = [H264_LADDER[1080], H264_LADDER[720], H264_LADDER[480], H264_LADDER[360]];

// Live rungs keep a one-second VBV buffer: a low-latency player holds little in its buffer.
const LIVE_LADDER = [rung(720, 2800, 128, 1), rung(480, 1400, 96, 1), rung(360, 800, 96, 1)];

/** Every ladder's audio is AAC, in each rung (HLS) or as one shared representation (DASH, CMAF). */
const LADDER = { kind: "ladder", audioCodec: "aac" } as const;
const HLS_TS = { format: "hls", segmentSeconds: 6, segmentType: "mpegts", playlist: "vod" } as const;
// HEVC and AV1 in HLS need fMP4 segments (Apple does not play HEVC in TS; AV1 has no TS mapping).
const HLS_FMP4 = { format: "hls", segmentSeconds: 6, segmentType: "fmp4", playlist: "vod" } as const;

const PODCAST_LOUDNESS: LoudnessTarget = { integrated: -16, truePeak: -1.5, range: 11 };
const EBU_R128_LOUDNESS: LoudnessTarget = { integrated: -23, truePeak: -1, range: 20 };

/** In catalogue order: GET /presets lists them so. */
export const PRESET_DEFINITIONS = {
  mp4_264_240p: {
    name: "MP4 H.264 240p",
    category: "standard",
    type: "vod",
    requiredPlan: "free",
    estimatedProcessingTime: "1-2 minutes",
    recipe: { ...MP4, video: X264, size: { width: 426, height: 240 }, crf: 26, maxrate: 400, audioBitrate: 64 },
  },
  mp4_264_480p: {
    name: "MP4 H.264 480p",
    category: "standard",
    type: "vod",
    requiredPlan: "free",
    estimatedProcessingTime: "1-3 minutes",
    recipe: { ...MP4, video: X264, size: { width: 854, height: 480 }, crf: 24, maxrate: 1400, audioBitrate: 96 },
  },
  mp4_264_720p: {
    name: "MP4 H.264 720p",
    category: "standard",
    type: "vod",
    requiredPlan: "free",
    estimatedProcessingTime: "2-4 minutes",
    recipe: { ...MP4, video: X264, size: { width: 1280, height: 720 }, crf: 23, maxrate: 3000, audioBitrate: 128 },
  },
  hls_abr_264_basic: {
    name: "HLS adaptive H.264, up to 720p",
    category: "streaming",
    type: "streaming_vod",
    requiredPlan: "free",
    estimatedProcessingTime: "3-6 minutes",
    recipe: {
      ...LADDER,
      video: X264,
      rungs: [H264_LADDER[720], H264_LADDER[480], H264_LADDER[360]],
      gopSeconds: 2,
      packaging: HLS_TS,
    },
  },
  audio_aac_podcast: {
    name: "Podcast audio, AAC, loudness-normalised",
    category: "audio",
    type: "audio",
    requiredPlan: "free",
    estimatedProcessingTime: "1-2 minutes",
    recipe: {
      kind: "podcast",
      container: "m4a",
      audioCodec: "aac",
      loudness: PODCAST_LOUDNESS,
      bitrateMono: 64,
      bitrateStereo: 128,
    },
  },
  util_thumbnails: {
    name: "Thumbnails (JPEG)",
    category: "utility",
    type: "utility",
    requiredPlan: "free",
    estimatedProcessingTime: "under 1 minute",
    recipe: { kind: "thumbnails", secondsPerThumbnail: 10, min: 5, max: 30, maxWidth: 640, jpegQuality: 3 },
  },
  util_subs_sidecar_basic: {
    name: "MP4 with WebVTT subtitle sidecars",
    category: "utility",
    type: "utility",
    requiredPlan: "free",
    estimatedProcessingTime: "2-4 minutes",
    recipe: {
      kind: "subtitle-sidecars",
      video: X264,
      maxWidth: 1920,
      maxHeight: 1080,
      crf: 23,
      audioCodec: "aac",
      audioBitrate: 128,
    },
  },
  mp4_264_1080p: {
    name: "MP4 H.264 1080p",
    category: "premium",
    type: "vod",
    requiredPlan: "pro",
    estimatedProcessingTime: "3-6 minutes",
    recipe: { ...MP4, video: X264, size: { width: 1920, height: 1080 }, crf: 22, maxrate: 6000, audioBitrate: 128 },
  },
  hls_abr_264_standard: {
    name: "HLS adaptive H.264, up to 1080p",
    category: "streaming",
    type: "streaming_vod",
    requiredPlan: "pro",
    estimatedProcessingTime: "4-8 minutes",
    recipe: { ...LADDER, video: X264, rungs: H264_UP_TO_1080, gopSeconds: 2, packaging: HLS_TS },
  },
  social_264_vertical_1080x1920: {
    name: "Social vertical 9:16 (1080x1920)",
    category: "social",
    type: "vod",
    requiredPlan: "pro",
    estimatedProcessingTime: "3-6 minutes",
    recipe: {
      ...MP4,
      video: X264,
      fit: "cover",
      size: { width: 1080, height: 1920 },
      crf: 22,
      maxrate: 6000,
      audioBitrate: 128,
    },
  },
  social_264_square_1080: {
    name: "Social square 1:1 (1080x1080)",
    category: "social",
    type: "vod",
    requiredPlan: "pro",
    estimatedProcessingTime: "2-5 minutes",
    recipe: {
      ...MP4,
      video: X264,
      fit: "cover",
      size: { width: 1080, height: 1080 },
      crf: 22,
      maxrate: 5000,
      audioBitrate: 128,
    },
  },
  audio_mp3_hq: {
    name: "MP3 high quality",
    category: "audio",
    type: "audio",
    requiredPlan: "pro",
    estimatedProcessingTime: "1-2 minutes",
    recipe: { kind: "mp3", container: "mp3", audioCodec: "libmp3lame", vbrQuality: 0 },
  },
  util_sprite_vtt: {
    name: "Sprite sheet with WebVTT thumbnail track",
    category: "utility",
    type: "utility",
    requiredPlan: "pro",
    estimatedProcessingTime: "under 1 minute",
    recipe: { kind: "sprite", tileWidth: 160, columns: 10, maxTiles: 100, minIntervalSeconds: 1, jpegQuality: 4 },
  },
  mp4_265_1080p_efficient: {
    name: "MP4 HEVC 1080p, efficient",
    category: "advanced",
    type: "vod",
    requiredPlan: "business",
    estimatedProcessingTime: "8-15 minutes",
    recipe: { ...MP4, video: X265, size: { width: 1920, height: 1080 }, crf: 26, audioBitrate: 128 },
  },
  webm_vp9_1080p: {
    name: "WebM VP9 1080p",
    category: "advanced",
    type: "vod",
    requiredPlan: "business",
    estimatedProcessingTime: "10-20 minutes",
    recipe: {
      kind: "progressive",
      container: "webm",
      video: VP9,
      size: { width: 1920, height: 1080 },
      fit: "contain",
      crf: 31,
      maxrate: 4000,
      bufsizeFactor: 2,
      audioCodec: "libopus",
      audioBitrate: 128,
    },
  },
  dash_abr_264_standard: {
    name: "DASH adaptive H.264, up to 1080p",
    category: "streaming",
    type: "streaming_vod",
    requiredPlan: "business",
    estimatedProcessingTime: "4-8 minutes",
    recipe: {
      ...LADDER,
      video: X264,
      rungs: H264_UP_TO_1080,
      gopSeconds: 2,
      packaging: { format: "dash", segmentSeconds: 4, lowLatency: false },
    },
  },
  filter_loudnorm_ebu_r128: {
    name: "Loudness normalisation (EBU R128)",
    category: "advanced",
    type: "filter",
    requiredPlan: "business",
    estimatedProcessingTime: "1-2 minutes",
    recipe: {
      kind: "audio-filter",
      container: "mp4",
      filter: { type: "loudnorm", loudness: EBU_R128_LOUDNESS },
      audioCodec: "aac",
      audioBitrate: 192,
    },
  },
  filter_audio_denoise: {
    name: "Audio denoise",
    category: "advanced",
    type: "filter",
    requiredPlan: "business",
    estimatedProcessingTime: "1-3 minutes",
    recipe: {
      kind: "audio-filter",
      container: "mp4",
      // afftdn is built in (arnndn needs a model file we would have to ship); tn=1 tracks a noise
      // floor that changes over the recording, nf=-40 suits room noise under speech.
      filter: { type: "denoise", afftdn: "afftdn=nr=12:nf=-40:tn=1" },
      audioCodec: "aac",
      audioBitrate: 192,
    },
  },
  live_hls_264_lowlatency: {
    name: "Low-latency event HLS, H.264",
    category: "live",
    type: "live",
    requiredPlan: "business",
    estimatedProcessingTime: "2-5 minutes",
    recipe: {
      ...LADDER,
      video: X264,
      rungs: LIVE_LADDER,
      gopSeconds: 1,
      packaging: { format: "hls", segmentSeconds: 2, segmentType: "fmp4", playlist: "event" },
    },
  },
  hls_abr_265_efficient_4k: {
    name: "HLS adaptive HEVC, up to 2160p",
    category: "streaming",
    type: "streaming_vod",
    requiredPlan: "enterprise",
    estimatedProcessingTime: "20-40 minutes",
    recipe: {
      ...LADDER,
      video: X265,
      rungs: [HEVC_LADDER[2160], HEVC_LADDER[1440], HEVC_LADDER[1080], HEVC_LADDER[720], HEVC_LADDER[480]],
      gopSeconds: 2,
      packaging: HLS_FMP4,
    },
  },
  cmaf_abr_265_standard: {
    name: "CMAF HEVC with HLS and DASH manifests",
    category: "advanced",
    type: "streaming_vod",
    requiredPlan: "enterprise",
    estimatedProcessingTime: "15-30 minutes",
    recipe: {
      ...LADDER,
      video: X265,
      rungs: [HEVC_LADDER[1080], HEVC_LADDER[720], HEVC_LADDER[480]],
      gopSeconds: 2,
      packaging: { format: "cmaf", segmentSeconds: 4 },
    },
  },
  hls_abr_av1_efficient: {
    name: "HLS adaptive AV1 (SVT-AV1)",
    category: "advanced",
    type: "streaming_vod",
    requiredPlan: "enterprise",
    estimatedProcessingTime: "10-25 minutes",
    recipe: {
      ...LADDER,
      video: SVTAV1,
      rungs: [rung(1080, 2500, 128), rung(720, 1300, 128), rung(480, 700, 96), rung(360, 400, 96)],
      gopSeconds: 2,
      packaging: HLS_FMP4,
    },
  },
  live_dash_264_lowlatency: {
    name: "Low-latency DASH, H.264",
    category: "live",
    type: "live",
    requiredPlan: "enterprise",
    estimatedProcessingTime: "2-5 minutes",
    recipe: {
      ...LADDER,
      video: X264,
      rungs: LIVE_LADDER,
      gopSeconds: 1,
      packaging: { format: "dash", segmentSeconds: 1, lowLatency: true },
    },
  },
} satisfies Record<string, PresetDefinition>;

export type PresetId = keyof typeof PRESET_DEFINITIONS;

const BY_ID: ReadonlyMap<string, PresetDefinition> = new Map(Object.entries(PRESET_DEFINITIONS));

/** The definition of a preset named by a caller, if there is one. */
export function findDefinition(id: string): PresetDefinition | undefined {
  return BY_ID.get(id);
}
