/** Per-plan EDL limits (spec, Limits › EDL plan limits). */
import { PLAN_DISPLAY_NAMES, type PlanId } from "../plans";

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
