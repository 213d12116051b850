/**
 * How a stream is cut into segments and parts (docs/playback.md#how-a-stream-is-made). Times are
 * seconds from the source's first video frame. The first segment is one keyframe interval long,
 * so the start of the stream is ready soonest; every later one is the preset's segment length,
 * the last whatever remains. The source's own end decides the last: the last part encodes to it,
 * whatever the probe said the duration was. A part is a run of whole segments, encoded on its own, its segments
 * written straight into the stream; the first parts are short, so the stream's start is ready
 * first, and they are handed out in timeline order.
 */

interface StreamPart {
  index: number;
  /** Where its first segment starts and its last ends. */
  from: number;
  to: number;
  firstSegment: number;
  segmentCount: number;
}

export interface StreamPlan {
  /** Every segment's start, then the end of the last: segment i spans boundaries[i] to boundaries[i + 1]. */
  boundaries: number[];
  parts: StreamPart[];
}

/** Segments in the first parts, in order; the parts after them take about `partSeconds` each. */
const OPENING_PARTS = [1, 1, 2];
/**
 * A tail shorter than this (seconds) joins the segment before it: a segment never holds too few
 * frames to be made, and none is longer than its target by enough to round past it.
 */
const SHORTEST_TAIL = 0.4;

/** Pure: the segments' boundaries of a stream `duration` long. */
export function segmentBoundaries(duration: number, gopSeconds: number, segmentSeconds: number): number[] {
  const boundaries = [0];
  let next = Math.min(gopSeconds, segmentSeconds);
  while (duration - next > SHORTEST_TAIL) {
    boundaries.push(next);
    next += segmentSeconds;
  }
  boundaries.push(duration);
  return boundaries;
}

/** Pure: the stream's segments and its parts, at most `maxParts` (the later ones grow to fit). */
export function planStream(
  duration: number,
  settings: { gopSeconds: number; segmentSeconds: number; partSeconds: number; maxParts: number },
): StreamPlan {
  const boundaries = segmentBoundaries(duration, settings.gopSeconds, settings.segmentSeconds);
  const segments = boundaries.length - 1;
  const counts: number[] = [];
  let placed = 0;
  for (const count of OPENING_PARTS) {
    if (placed >= segments) break;
    counts.push(Math.min(count, segments - placed));
    placed += counts[counts.length - 1];
  }
  const rest = segments - placed;
  if (rest > 0) {
    const room = Math.max(1, settings.maxParts - counts.length);
    const each = Math.max(Math.round(settings.partSeconds / settings.segmentSeconds), Math.ceil(rest / room), 1);
    for (let left = rest; left > 0; left -= each) counts.push(Math.min(each, left));
  }
  let first = 0;
  const parts = counts.map((segmentCount, index) => {
    const part = {
      index,
      from: boundaries[first],
      to: boundaries[first + segmentCount],
      firstSegment: first,
      segmentCount,
    };
    first += segmentCount;
    return part;
  });
  return { boundaries, parts };
}
