/** The EDL stats object (docs/contract.md §3.15), computed from whatever of the timeline could be read. */
import { type Complexity, complexityLevel, complexityScore } from "./complexity";
import type { EdlFeature } from "./validated-edl";
import type { TimelineReading } from "./timeline";

export interface EdlStats {
  clips: number;
  /** Seconds to the end of the last clip on any track, rounded to the millisecond. */
  duration: number;
  tracks: number;
  assets: number;
  complexity: Complexity;
  /** 1.0: the accepted-but-not-applied properties used; 1.1: what the timeline applies. */
  features: EdlFeature[];
}

/** The subset POST /edl returns. */
export type EdlPostStats = Pick<EdlStats, "clips" | "duration" | "tracks" | "complexity">;

export function postStats({ clips, duration, tracks, complexity }: EdlStats): EdlPostStats {
  return { clips, duration, tracks, complexity };
}

export function computeStats(timeline: TimelineReading): EdlStats {
  const readings = timeline.tracks.flatMap((t) => t.clips.map((entry) => ({ type: t.type, ...entry.reading })));
  // reduce, not Math.max(...spread): a huge clip array would overflow the argument stack.
  const end = readings.reduce((latest, r) => Math.max(latest, r.span?.end ?? 0), 0);
  const duration = Math.round(end * 1000) / 1000;
  const count = (keep: (r: (typeof readings)[number]) => boolean) => readings.filter(keep).length;
  return {
    clips: timeline.tracks.reduce((sum, t) => sum + t.clipCount, 0),
    duration,
    tracks: timeline.tracks.length,
    // Compared as written: the worker downloads each distinct string once.
    assets: new Set(readings.flatMap((r) => r.urls)).size,
    complexity: complexityLevel(
      complexityScore({
        videoClips: count((r) => r.type === "video"),
        overlays: count((r) => r.type === "overlay"),
        texts: count((r) => r.type === "text"),
        speedChanges: count((r) => r.speedChange),
        blends: count((r) => r.blend),
        effects: readings.reduce((sum, r) => sum + r.effects, 0),
        xfades: timeline.transitions?.xfades ?? 0,
        duration,
      }),
    ),
    features: timeline.features,
  };
}
