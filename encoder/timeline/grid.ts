import { SAMPLE_RATE } from "./audio";

/**
 * The output's frame grid, which every boundary of the video track snaps to, and the audio
 * sample at each frame's instant.
 */

/** A stretch of the timeline as whole output frames, and the audio samples of the same span. */
export interface Span {
  frames: number;
  samples: number;
}

export const sampleAt = (frame: number, fps: number) => Math.round((frame / fps) * SAMPLE_RATE);
export const frameAt = (t: number, fps: number) => Math.round(t * fps);

/** Frames `a` to `b` of the output, and the samples of the same instants. */
export const framesSpan = (a: number, b: number, fps: number): Span => ({
  frames: b - a,
  samples: sampleAt(b, fps) - sampleAt(a, fps),
});

/**
 * Boundaries snap to the output's frame grid, and the audio to the same instants, so every
 * segment is a whole number of frames and the joined track can never drift from the timeline:
 * four 2.5 s clips at 25 fps start at frames 0, 63, 125, 188 (not 0, 63, 126, 189).
 */
export function spanOf(from: number, to: number, fps: number): Span {
  return framesSpan(frameAt(from, fps), frameAt(to, fps), fps);
}
