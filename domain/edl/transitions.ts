/**
 * Version 1.1's transitions between neighbours on the video track (docs/timelines.md, version
 * 1.1). Any transition but `fade` blends a clip with its neighbour, so the two must overlap by
 * exactly its duration: the timeline's length is then simply the latest clip end, and the
 * overlap is no "overlapping clips" warning. A transition with no neighbour on its side blends
 * with black.
 */
import type { ClipReading } from "./clips";
import type { TransitionEdge, VideoClip } from "./validated-edl";

export interface VideoEntry {
  label: string;
  path: string;
  reading: ClipReading<VideoClip>;
}

export interface TransitionReading {
  /** Each clip that overlaps its predecessor by a transition, with that predecessor. */
  joined: Map<VideoEntry, VideoEntry>;
  /** Blends of two pictures (xfade), with black or with a neighbour. */
  xfades: number;
  /** Seconds of the timeline where two clips are decoded at once. */
  overlap: number;
}

const blend = (edge: TransitionEdge | undefined) => (edge && edge.type !== "fade" ? edge : undefined);
const seconds = (value: number) => +value.toFixed(3);

/** Checks the pairs of neighbours, in timeline order, that a transition joins; `fps` sets the tolerance. */
export function readTransitions(entries: VideoEntry[], fps: number | undefined, errors: string[]): TransitionReading {
  // Half a frame at the output rate: the renderer cuts on the frame grid anyway.
  const tolerance = fps ? 0.5 / fps : 0.001;
  const timed = entries
    .filter((e) => e.reading.clip && e.reading.span)
    .sort((a, b) => (a.reading.span?.start ?? 0) - (b.reading.span?.start ?? 0));
  const result: TransitionReading = { joined: new Map(), xfades: 0, overlap: 0 };
  const length = (e: VideoEntry) => (e.reading.span ? e.reading.span.end - e.reading.span.start : 0);
  timed.forEach((clip, i) => {
    const prev = timed[i - 1];
    const next = timed[i + 1];
    const own = { in: blend(clip.reading.clip?.transition?.in), out: blend(clip.reading.clip?.transition?.out) };
    // With black: counted here; a pair is counted once, from its second clip.
    if (own.in && !prev) result.xfades++;
    if (own.out && !next) result.xfades++;
    if (!prev) return;
    const before = blend(prev.reading.clip?.transition?.out);
    const edge = own.in ?? before;
    if (!edge) return;
    if (own.in && before && (own.in.type !== before.type || Math.abs(own.in.duration - before.duration) > tolerance)) {
      errors.push(
        `${clip.path}.transition.in: must match ${prev.label}'s transition.out (${before.type}, ${before.duration} s), or be left out`,
      );
      return;
    }
    const prevEnd = prev.reading.span?.end ?? 0;
    const start = clip.reading.span?.start ?? 0;
    const expected = prevEnd - edge.duration;
    if (Math.abs(start - expected) > tolerance) {
      errors.push(
        own.in
          ? `${clip.path}.startTime: must be ${seconds(expected)} so that its ${edge.type} overlaps ${prev.label} (ending at ${seconds(prevEnd)}) by ${edge.duration} s`
          : `${prev.path}.transition.out: the next clip, ${clip.label}, must start at ${seconds(expected)} to overlap this one by ${edge.duration} s (it starts at ${seconds(start)})`,
      );
      return;
    }
    const shorter = Math.min(length(prev), length(clip));
    if (edge.duration > shorter + tolerance) {
      errors.push(
        `${own.in ? `${clip.path}.transition.in` : `${prev.path}.transition.out`}.duration: must be at most the length of both clips, ${seconds(shorter)} s`,
      );
      return;
    }
    result.joined.set(clip, prev);
    result.xfades++;
    result.overlap += edge.duration;
  });
  return result;
}
