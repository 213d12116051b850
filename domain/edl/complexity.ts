/**
 * How demanding a timeline is to render, as a level (docs/contract.md §3.15: `simple` and
 * `moderate` are the values shown; `complex` and `heavy` are ours above them).
 *
 * score = (video clips − 1)        each cut adds a trimmed segment to the concat
 *       + 2 × overlays             an extra input, scaled and composited over the frame
 *       + 1 × text items           drawtext is cheap
 *       + 2 × speed changes        setpts plus an atempo chain per clip
 *       + 3 × non-normal blends    gbrp conversion and a blend per frame under the image
 *       + 2 × xfade transitions    two pictures decoded and blended over the overlap (1.1)
 *       + 1 × effects              each fade, crop, transform, filter and freeze, and per ten
 *                                  caption cues (1.1; see ./clips.ts and ./caption-clip.ts)
 *       + ⌊duration / 600⌋         one point per full ten minutes of output
 *
 * simple 0–3, moderate 4–11, complex 12–29, heavy 30 and above. So one clip with a caption and
 * a logo is simple; a 3-clip timeline with a gap, a blended overlay and text (the one that
 * calibrated `estimate.ts`) scores 8, moderate.
 */

export const COMPLEXITY_LEVELS = ["simple", "moderate", "complex", "heavy"] as const;
export type Complexity = (typeof COMPLEXITY_LEVELS)[number];

export interface ComplexityInputs {
  videoClips: number;
  overlays: number;
  texts: number;
  speedChanges: number;
  blends: number;
  /** Version 1.1's per-clip work, in points. */
  effects?: number;
  /** Version 1.1's blends between two pictures (a pair counted once). */
  xfades?: number;
  /** Output seconds. */
  duration: number;
}

export function complexityScore(i: ComplexityInputs): number {
  return (
    Math.max(0, i.videoClips - 1) +
    2 * i.overlays +
    i.texts +
    2 * i.speedChanges +
    3 * i.blends +
    2 * (i.xfades ?? 0) +
    (i.effects ?? 0) +
    Math.floor(i.duration / 600)
  );
}

/** Lowest score of each level above `simple`. */
const THRESHOLDS: [number, Complexity][] = [
  [30, "heavy"],
  [12, "complex"],
  [4, "moderate"],
];

export function complexityLevel(score: number): Complexity {
  return THRESHOLDS.find(([min]) => score >= min)?.[1] ?? "simple";
}
