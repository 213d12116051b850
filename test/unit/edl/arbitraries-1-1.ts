/**
 * fast-check arbitraries for version 1.1 (docs/timelines.md, version 1.1): valid documents using
 * every new property, within a plan's limits so each must pass, and junk shaped like the new
 * fields for the fuzzing.
 */
import fc from "fast-check";
import {
  FILTER_TYPES,
  FLIPS,
  LAYER_TRANSITION_TYPES,
  TRANSITION_TYPES,
  X_KEYWORDS,
  Y_KEYWORDS,
} from "../../../domain/edl/validated-edl";
import { junk, type TimelineShape } from "./arbitraries";

type Json = Record<string, unknown>;

const real = (min: number, max: number) => fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
const optional = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(fields, { requiredKeys: [] }) as fc.Arbitrary<Json>;

const crop = optional({ top: real(0, 0.49), bottom: real(0, 0.49), left: real(0, 0.49), right: real(0, 0.49) });
const transform = optional({ rotate: real(-360, 360), flip: fc.constantFrom(...FLIPS), scale: real(0.01, 10) });
const filters = fc.array(
  fc.oneof(
    fc.constantFrom(...FILTER_TYPES),
    fc.record({ type: fc.constantFrom(...FILTER_TYPES), strength: real(0, 1) }, { requiredKeys: ["type"] }),
  ),
  { maxLength: 10 },
);
const XFADES = TRANSITION_TYPES.filter((t) => t !== "fade");

/** One video clip's source span and its 1.1 extras, before it is placed on the timeline. */
const videoPiece = (urls: string[]) =>
  fc.record({
    src: fc.constantFrom(...urls),
    in: real(0, 100),
    span: real(0.5, 30),
    speed: real(0.5, 4),
    freeze: fc.option(fc.record({ at: real(0, 1), duration: real(0.1, 5) }), { nil: undefined }),
    extras: optional({ crop, transform, filters }),
    /** How it joins the previous clip: a gap (with fades maybe), or an xfade of this fraction of the shorter. */
    join: fc.oneof(
      fc.record({ gap: real(0, 5), fadeIn: fc.option(real(0.01, 0.4), { nil: undefined }) }),
      fc.record({ type: fc.constantFrom(...XFADES), fraction: real(0.05, 0.9) }),
    ),
    fadeOut: fc.option(real(0.01, 0.4), { nil: undefined }),
  });

/** A video track whose transitions overlap their neighbours exactly, as the rules ask. */
function videoTrack(urls: string[], maxClips: number): fc.Arbitrary<Json[]> {
  return fc
    .tuple(real(1, 50), fc.array(videoPiece(urls), { minLength: 1, maxLength: maxClips }))
    .map(([first, pieces]) => {
      const clips: Json[] = [];
      let prev: { end: number; length: number } | undefined;
      for (const p of pieces) {
        const out = p.in + p.span;
        const freeze = p.freeze && { at: p.in + p.freeze.at * (out - p.in), duration: p.freeze.duration };
        const length = (out - p.in) / p.speed + (freeze?.duration ?? 0);
        const transition: Json = {};
        let startTime: number;
        if (!prev) startTime = first;
        else if ("type" in p.join) {
          const duration = Math.min(60, p.join.fraction * Math.min(prev.length, length));
          startTime = prev.end - duration;
          transition.in = { type: p.join.type, duration };
        } else {
          startTime = prev.end + p.join.gap;
          if (p.join.fadeIn !== undefined) transition.in = { type: "fade", duration: p.join.fadeIn * length };
        }
        if (p.fadeOut !== undefined) transition.out = { type: "fade", duration: p.fadeOut * length };
        clips.push({
          src: p.src,
          in: p.in,
          out,
          startTime,
          speed: p.speed,
          ...(freeze && { freeze }),
          ...(Object.keys(transition).length > 0 && { transition }),
          ...p.extras,
        });
        prev = { end: startTime + (out - p.in) / p.speed + (freeze?.duration ?? 0), length };
      }
      return clips;
    });
}

/** Slides in and out, each at most 40% of the duration, so together they fit. */
const layerTransition = (duration: number) =>
  optional({
    in: fc.record({ type: fc.constantFrom(...LAYER_TRANSITION_TYPES.slice(1)), duration: real(0.01, 0.4) }),
    out: fc.record({ type: fc.constantFrom(...LAYER_TRANSITION_TYPES.slice(1)), duration: real(0.01, 0.4) }),
  }).map((t) =>
    Object.fromEntries(
      Object.entries(t).map(([side, edge]) => [
        side,
        { ...(edge as Json), duration: (edge as { duration: number }).duration * duration },
      ]),
    ),
  );

const timed = fc.record({ startTime: real(0, 200), duration: real(0.1, 60) });

const overlayClip = (urls: string[]) =>
  timed.chain(({ startTime, duration }) =>
    fc
      .record({
        src: fc.constantFrom(...urls),
        extras: optional({ transition: layerTransition(duration), crop, transform, filters }),
      })
      .map(({ extras, ...clip }) => ({ ...clip, startTime, duration, ...extras })),
  );

const textClip = timed.chain(({ startTime, duration }) =>
  fc
    .record({
      text: fc.string({ minLength: 1 }).filter((s) => s.trim() !== ""),
      extras: optional({ transition: layerTransition(duration) }),
    })
    .map(({ extras, ...clip }) => ({ ...clip, startTime, duration, ...extras })),
);

const cues = fc
  .array(
    fc.record({
      gap: real(0, 3),
      length: real(0.1, 5),
      text: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== ""),
    }),
    { minLength: 1, maxLength: 8 },
  )
  .map((list) => {
    let at = 0;
    return list.map(({ gap, length, text }) => {
      const start = at + gap;
      at = start;
      return { start, end: start + length, text };
    });
  });

const captionClip = (urls: string[]) =>
  fc
    .record({
      startTime: fc.option(real(0, 100), { nil: undefined }),
      source: fc.oneof(
        fc.constantFrom(...urls).map((src) => ({ src })),
        cues.map((list) => ({ cues: list })),
      ),
      style: optional({
        fontSize: real(1, 200),
        position: optional({ x: fc.constantFrom(...X_KEYWORDS), y: fc.constantFrom(...Y_KEYWORDS) }),
        background: optional({ opacity: real(0, 1) }),
      }),
    })
    .map(({ startTime, source, style }) => ({ ...(startTime !== undefined && { startTime }), ...source, ...style }));

/** A valid 1.1 document within `shape`, every new property among its possibilities. */
export function validEdl11(shape: TimelineShape): fc.Arbitrary<Json> {
  const urls = Array.from({ length: shape.urls }, (_, i) => `https://media.example.com/asset-${i}`);
  const extra = fc.oneof(
    fc
      .array(overlayClip(urls), { maxLength: shape.maxClipsPerExtraTrack })
      .map((clips) => ({ type: "overlay", clips })),
    fc.array(textClip, { maxLength: shape.maxClipsPerExtraTrack }).map((clips) => ({ type: "text", clips })),
    fc
      .array(captionClip(urls), { maxLength: shape.maxClipsPerExtraTrack })
      .map((clips) => ({ type: "caption", clips })),
  );
  return fc
    .record({
      video: videoTrack(urls, shape.maxVideoClips).map((clips) => ({ type: "video", clips })),
      extra: fc.array(extra, { maxLength: shape.maxExtraTracks }),
      fps: fc.option(fc.constantFrom(24, 25, 30, 60), { nil: undefined }),
    })
    .map(({ video, extra, fps }) => ({
      version: "1.1",
      ...(fps && { output: { fps } }),
      timeline: {
        tracks: [video, ...extra].map((t, i) => ({
          ...t,
          clips: t.clips.map((clip: Json, j: number) => ({ id: `clip-${i}-${j}`, ...clip })),
        })),
      },
    }));
}

/** Values shaped like the new fields, and junk, for one spot of a valid 1.1 document. */
export const newFieldJunk: fc.Arbitrary<unknown> = fc.oneof(
  junk,
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom("fade", "crossfade", "wipeLeft", "greyscale", "horizontal", "caption", "1.1"),
  real(-1e6, 1e6),
  fc.record(
    {
      in: fc.oneof(fc.record({ type: fc.constantFrom(...TRANSITION_TYPES), duration: real(-10, 100) }), junk),
      out: fc.oneof(fc.record({ type: fc.string(), duration: fc.jsonValue() }), junk),
    },
    { requiredKeys: [] },
  ),
  fc.record({ top: real(-1, 2), bottom: real(-1, 2), left: fc.jsonValue(), right: real(-1, 2) }, { requiredKeys: [] }),
  fc.record({ rotate: real(-1000, 1000), flip: fc.string(), scale: real(-1, 20) }, { requiredKeys: [] }),
  fc.array(fc.oneof(fc.constantFrom(...FILTER_TYPES), fc.record({ type: fc.string(), strength: real(-1, 2) }), junk), {
    maxLength: 12,
  }),
  fc.record({ at: real(-10, 1000), duration: real(-1, 4000) }, { requiredKeys: [] }),
  fc.array(fc.record({ start: real(-1, 100), end: real(-1, 100), text: fc.oneof(fc.string(), junk) }), {
    maxLength: 5,
  }),
);
