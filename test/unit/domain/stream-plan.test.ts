import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planStream, segmentBoundaries } from "../../../domain/stream/plan";

/** domain/stream/plan.ts's SHORTEST_TAIL: a last segment shorter than this joins the one before. */
const SHORTEST_TAIL = 0.4;
/** The opening parts' segment counts (domain/stream/plan.ts's OPENING_PARTS). */
const OPENING = [1, 1, 2];

/** Keyframe intervals and segment lengths as the ladders have them, and a few they do not. */
const timing = fc.record({
  gopSeconds: fc.constantFrom(0.5, 1, 2, 3),
  segmentSeconds: fc.integer({ min: 1, max: 10 }),
});
/** Streams from a fraction of a second to 20 minutes, on a grid of a millisecond. */
const durations = fc.integer({ min: 50, max: 1_200_000 }).map((ms) => ms / 1000);

const lengthsOf = (boundaries: number[]) => boundaries.slice(1).map((end, i) => end - boundaries[i]);

describe("segmentBoundaries (docs/playback.md#how-a-stream-is-made)", () => {
  it("run from 0 to the duration, the first a keyframe interval long, the later ones the segment length, no tail shorter than SHORTEST_TAIL", () => {
    fc.assert(
      fc.property(durations, timing, (duration, { gopSeconds, segmentSeconds }) => {
        const boundaries = segmentBoundaries(duration, gopSeconds, segmentSeconds);
        expect(boundaries[0]).toBe(0);
        expect(boundaries.at(-1)).toBe(duration);
        const lengths = lengthsOf(boundaries);
        for (const length of lengths) expect(length).toBeGreaterThan(0);
        const first = Math.min(gopSeconds, segmentSeconds);
        if (lengths.length === 1) {
          // A stream too short for a second segment: one, however long the opening would be.
          expect(duration).toBeLessThanOrEqual(first + SHORTEST_TAIL + 1e-9);
          return;
        }
        expect(lengths[0]).toBeCloseTo(first, 9);
        for (const middle of lengths.slice(1, -1)) expect(middle).toBeCloseTo(segmentSeconds, 9);
        const tail = lengths[lengths.length - 1];
        expect(tail).toBeGreaterThan(SHORTEST_TAIL);
        // A short tail joined to the segment before it makes that one at most SHORTEST_TAIL longer.
        expect(tail).toBeLessThanOrEqual(segmentSeconds + SHORTEST_TAIL + 1e-9);
      }),
    );
  });

  it("exact cases: a short tail joins, a longer one stands, a stream shorter than the opening is one segment", () => {
    expect(segmentBoundaries(20.3, 2, 6)).toEqual([0, 2, 8, 14, 20.3]);
    expect(segmentBoundaries(20.5, 2, 6)).toEqual([0, 2, 8, 14, 20, 20.5]);
    expect(segmentBoundaries(1, 2, 6)).toEqual([0, 1]);
    expect(segmentBoundaries(2.3, 2, 6)).toEqual([0, 2.3]);
    expect(segmentBoundaries(2.5, 2, 6)).toEqual([0, 2, 2.5]);
    expect(segmentBoundaries(5, 1, 1)).toEqual([0, 1, 2, 3, 4, 5]);
    // The opening is never longer than a segment.
    expect(segmentBoundaries(5, 2, 1)).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

describe("planStream (docs/playback.md#how-a-stream-is-made)", () => {
  const settings = fc.record({
    partSeconds: fc.integer({ min: 1, max: 120 }),
    maxParts: fc.integer({ min: OPENING.length + 1, max: 200 }),
  });

  it("parts of whole segments, contiguous over the stream; 1, 1 and 2 segments first, then about partSeconds each, never more than maxParts", () => {
    fc.assert(
      fc.property(durations, timing, settings, (duration, { gopSeconds, segmentSeconds }, rest) => {
        const plan = planStream(duration, { gopSeconds, segmentSeconds, ...rest });
        const { boundaries, parts } = plan;
        expect(boundaries).toEqual(segmentBoundaries(duration, gopSeconds, segmentSeconds));
        const segments = boundaries.length - 1;

        let next = 0;
        for (const [i, part] of parts.entries()) {
          expect(part.index).toBe(i);
          expect(part.firstSegment).toBe(next);
          expect(part.segmentCount).toBeGreaterThanOrEqual(1);
          expect(part.from).toBe(boundaries[part.firstSegment]);
          expect(part.to).toBe(boundaries[part.firstSegment + part.segmentCount]);
          next += part.segmentCount;
        }
        expect(next).toBe(segments);
        expect(parts[0].from).toBe(0);
        expect(parts.at(-1)?.to).toBe(duration);
        expect(parts.length).toBeLessThanOrEqual(rest.maxParts);

        const counts = parts.map((p) => p.segmentCount);
        // The opening parts, cut short by a stream that has fewer segments.
        let left = segments;
        const opening = OPENING.flatMap((count) => {
          const taken = Math.min(count, left);
          left -= taken;
          return taken > 0 ? [taken] : [];
        });
        expect(counts.slice(0, opening.length)).toEqual(opening);

        const later = counts.slice(opening.length);
        const target = Math.max(1, Math.round(rest.partSeconds / segmentSeconds));
        const room = rest.maxParts - opening.length;
        if (later.length === 1) expect(later[0] <= target || room === 1, `${later[0]} segments in one part`).toBe(true);
        if (later.length < 2) return;
        const each = later[0];
        // Every later part but the last is as long as the first of them; the last takes what remains.
        for (const count of later.slice(0, -1)) expect(count).toBe(each);
        expect(later[later.length - 1]).toBeLessThanOrEqual(each);
        expect(each).toBeGreaterThanOrEqual(target);
        if (each > target) {
          // Grown only as far as maxParts needs: one segment fewer each would make too many parts.
          const laterSegments = later.reduce((sum, count) => sum + count, 0);
          expect(Math.ceil(laterSegments / (each - 1))).toBeGreaterThan(room);
        }
      }),
    );
  });

  it("exact cases", () => {
    const ladder = { gopSeconds: 2, segmentSeconds: 6, partSeconds: 30, maxParts: 200 };
    expect(planStream(60, ladder)).toEqual({
      boundaries: [0, 2, 8, 14, 20, 26, 32, 38, 44, 50, 56, 60],
      parts: [
        { index: 0, from: 0, to: 2, firstSegment: 0, segmentCount: 1 },
        { index: 1, from: 2, to: 8, firstSegment: 1, segmentCount: 1 },
        { index: 2, from: 8, to: 20, firstSegment: 2, segmentCount: 2 },
        { index: 3, from: 20, to: 50, firstSegment: 4, segmentCount: 5 },
        { index: 4, from: 50, to: 60, firstSegment: 9, segmentCount: 2 },
      ],
    });
    // Fewer segments than the opening parts hold: the last of them takes what there is.
    expect(planStream(9, ladder).parts.map((p) => [p.from, p.to])).toEqual([
      [0, 2],
      [2, 8],
      [8, 9],
    ]);
    expect(planStream(1.5, ladder)).toEqual({
      boundaries: [0, 1.5],
      parts: [{ index: 0, from: 0, to: 1.5, firstSegment: 0, segmentCount: 1 }],
    });
    // An hour of 1 s segments in at most 10 parts: the 7 after the opening grow from 30 segments to 514.
    const capped = planStream(3600, { gopSeconds: 1, segmentSeconds: 1, partSeconds: 30, maxParts: 10 });
    expect(capped.parts.map((p) => p.segmentCount)).toEqual([1, 1, 2, 514, 514, 514, 514, 514, 514, 512]);
  });
});
