/** Per-plan EDL limits (docs/contract.md §9.2). */
import { PLAN_DISPLAY_NAMES, type PlanId } from "../plans";
import { type Track, textLines } from "./validated-edl";

export interface EdlLimits {
  clips: number;
  /** Distinct URLs: each `src` and `replaceAudio` counted once across the whole timeline. */
  assets: number;
  /** Timeline length in seconds: the end of the last clip on any track. */
  durationSeconds: number;
  tracks: number;
}

export const EDL_LIMITS: Record<PlanId, EdlLimits> = {
  free: { clips: 5, assets: 5, durationSeconds: 10 * 60, tracks: 2 },
  pro: { clips: 20, assets: 20, durationSeconds: 30 * 60, tracks: 5 },
  business: { clips: 100, assets: 100, durationSeconds: 2 * 60 * 60, tracks: 20 },
  enterprise: { clips: 1000, assets: 500, durationSeconds: 10 * 60 * 60, tracks: 50 },
};

export interface EdlUsage {
  clips: number;
  assets: number;
  duration: number;
  tracks: number;
}

/** One error per limit the timeline goes over; each names the plan by its display name. */
export function limitErrors(usage: EdlUsage, plan: PlanId): string[] {
  const limits = EDL_LIMITS[plan];
  const name = PLAN_DISPLAY_NAMES[plan];
  const errors: string[] = [];
  const count = (what: string, used: number, max: number) => {
    if (used > max) errors.push(`Too many ${what} for the ${name} plan: ${used} (maximum ${max})`);
  };
  count("clips", usage.clips, limits.clips);
  count("assets", usage.assets, limits.assets);
  count("tracks", usage.tracks, limits.tracks);
  if (usage.duration > limits.durationSeconds) {
    errors.push(
      `Timeline too long for the ${name} plan: ${usage.duration} seconds (maximum ${limits.durationSeconds} seconds)`,
    );
  }
  return errors;
}

/**
 * Lines of text a timeline may draw, all its text clips together, on every plan. Each line is a
 * drawtext filter of its own, with its own memory and start-up in FFmpeg
 * (docs/timelines.md#validation-decisions); the body limit alone would let one text of half a
 * million lines through.
 */
export const MAX_TEXT_LINES = 1000;

/** The shortest timeline: below a frame's length it has no frame to encode. */
export const MIN_TIMELINE_SECONDS = 0.1;

/** Rules on a readable timeline's size that hold on every plan: its text lines and its length. */
export function sizeErrors(tracks: Track[], duration: number, fps: number | undefined): string[] {
  const errors: string[] = [];
  // flatMap and reduce, not for…of: they pass over the holes a sparse array (not JSON, but a
  // value validateEdl is given) leaves in an otherwise valid timeline.
  const textLineCount = tracks
    .flatMap((track) => (track.type === "text" ? track.clips : []))
    .reduce((sum, clip) => sum + textLines(clip).length, 0);
  // Each inline cue's line is a drawtext too (1.1); a caption file's are the encoder's to count.
  const captionLines = tracks
    .flatMap((track) => (track.type === "caption" ? track.clips.flatMap((clip) => clip.cues ?? []) : []))
    .reduce((sum, cue) => sum + textLines(cue).length, 0);
  const lines = textLineCount + captionLines;
  if (lines > MAX_TEXT_LINES) {
    const where = captionLines > 0 ? "the text clips and captions" : "the text clips";
    errors.push(`Too many lines of text: ${lines} across ${where} (maximum ${MAX_TEXT_LINES})`);
  }
  const shortest = Math.max(MIN_TIMELINE_SECONDS, fps ? 1 / fps : 0);
  if (duration < shortest) {
    errors.push(
      `Timeline too short: ${duration} seconds (minimum ${+shortest.toFixed(3)} seconds${fps ? `, one frame at ${fps} fps` : ""})`,
    );
  }
  return errors;
}
