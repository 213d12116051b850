/**
 * Processing-time estimate for a timeline (docs/contract.md §5.6 and §5.7, `estimate`); the runs
 * that calibrated it are in docs/timelines.md#estimate.
 *
 *   seconds = 10 + 2 × assets
 *           + duration × pixelFactor × presetFactor × complexityFactor / codecSpeed
 *
 * - codecSpeed: output seconds encoded per wall second at 1080p30, preset veryfast, on the
 *   2-core workers: libx264 2.3, libx265 0.79, libvpx-vp9 0.45.
 * - pixelFactor = 0.4 + 0.6 × (width × height × fps) / (1920 × 1080 × 30): decoding, filters
 *   and audio (the 0.4) do not shrink with the output; encoding scales with pixels per second.
 * - presetFactor: cost relative to veryfast; superfast and faster as measured, the others by
 *   x264's documented progression.
 * - complexityFactor: simple 1, moderate 1.25, complex 1.6, heavy 2.2.
 * - 10 s start-up plus 2 s per asset for downloads.
 * - duration counts a transition's overlap twice (version 1.1): both clips are decoded there.
 *
 * Runs on these machines vary from one to the next, so the range shown is 0.8× to 1.4× of
 * `seconds`, in whole minutes ("1-2 minutes"), "under 1 minute", or whole hours past two hours,
 * the same style as the preset catalogue.
 */
import type { Complexity } from "./complexity";
import {
  DEFAULT_FPS,
  DEFAULT_RESOLUTION,
  type EncoderPreset,
  type OutputSettings,
  type VideoCodec,
} from "./validated-edl";

const CODEC_SPEED: Record<VideoCodec, number> = { libx264: 2.3, libx265: 0.79, "libvpx-vp9": 0.45 };

const PRESET_FACTOR: Record<EncoderPreset, number> = {
  ultrafast: 0.5,
  superfast: 0.7,
  veryfast: 1,
  faster: 1.6,
  fast: 2,
  medium: 2.5,
  slow: 4,
  slower: 8,
  veryslow: 16,
};

const COMPLEXITY_FACTOR: Record<Complexity, number> = { simple: 1, moderate: 1.25, complex: 1.6, heavy: 2.2 };

const REFERENCE_PIXEL_RATE = 1920 * 1080 * 30;

export interface EdlEstimate {
  processingTime: string;
  complexity: Complexity;
}

export interface EstimateInputs {
  output: Pick<OutputSettings, "resolution" | "fps" | "videoCodec" | "preset">;
  /** Output seconds. */
  duration: number;
  /** Seconds where two clips are decoded at once (1.1 transitions). */
  overlap?: number;
  assets: number;
  complexity: Complexity;
}

export function estimateSeconds({ output, duration, overlap = 0, assets, complexity }: EstimateInputs): number {
  // Without an output size the first clip's decides; the estimate assumes the 1080p30 reference.
  const { width, height } = output.resolution ?? DEFAULT_RESOLUTION;
  const pixelFactor = 0.4 + (0.6 * width * height * (output.fps ?? DEFAULT_FPS)) / REFERENCE_PIXEL_RATE;
  const render =
    ((duration + overlap) * pixelFactor * PRESET_FACTOR[output.preset] * COMPLEXITY_FACTOR[complexity]) /
    CODEC_SPEED[output.videoCodec];
  return 10 + 2 * assets + render;
}

export function formatRange(seconds: number): string {
  const low = seconds * 0.8;
  const high = seconds * 1.4;
  if (high <= 60) return "under 1 minute";
  const unit = high <= 2 * 60 * 60 ? { size: 60, name: "minutes" } : { size: 60 * 60, name: "hours" };
  const from = Math.max(1, Math.floor(low / unit.size));
  const to = Math.max(from + 1, Math.ceil(high / unit.size));
  return `${from}-${to} ${unit.name}`;
}

export function estimate(inputs: EstimateInputs): EdlEstimate {
  return { processingTime: formatRange(estimateSeconds(inputs)), complexity: inputs.complexity };
}
