/**
 * fast-check arbitraries: valid EDLs assembled from valid pieces, and junk shaped like an EDL.
 * The valid generator stays inside a plan's limits so every generated timeline must pass.
 */
import fc from "fast-check";
import {
  BLEND_MODES,
  CONTAINER_CODECS,
  CONTAINERS,
  CRF_RANGE,
  ENCODER_PRESETS,
  FONT_WEIGHTS,
  TEXT_ALIGNS,
  UNAPPLIED_FEATURES,
  X_KEYWORDS,
  Y_KEYWORDS,
} from "../../../domain/edl/validated-edl";

type Json = Record<string, unknown>;

/** Finite doubles in [min, max]. */
const real = (min: number, max: number) => fc.double({ min, max, noNaN: true, noDefaultInfinity: true });

/** Optional fields: present with a valid value, or left out. */
const optional = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(fields, { requiredKeys: [] }) as fc.Arbitrary<Json>;

const output: fc.Arbitrary<Json> = fc.constantFrom(...CONTAINERS).chain((container) =>
  fc
    .record({
      videoCodec: fc.constantFrom(...CONTAINER_CODECS[container].video),
      audioCodec: fc.constantFrom(...CONTAINER_CODECS[container].audio),
    })
    .chain(({ videoCodec, audioCodec }) =>
      optional({
        resolution: fc
          .tuple(fc.integer({ min: 8, max: 3840 }), fc.integer({ min: 8, max: 3840 }))
          .map(([w, h]) => `${2 * w}x${2 * h}`),
        fps: real(1, 120),
        videoBitrate: fc.integer({ min: 50, max: 100_000 }).map((k) => `${k}k`),
        audioBitrate: fc.integer({ min: 8, max: 512 }).map((k) => `${k}k`),
        preset: fc.constantFrom(...ENCODER_PRESETS),
        crf: fc.integer({ min: 0, max: CRF_RANGE[videoCodec].max }),
      }).map((rest) => ({ container, videoCodec, audioCodec, ...rest })),
    ),
);

const hexDigit = fc.constantFrom(..."0123456789abcdefABCDEF");
const hexColor = fc
  .constantFrom(3, 6, 8)
  .chain((length) => fc.array(hexDigit, { minLength: length, maxLength: length }))
  .map((digits) => `#${digits.join("")}`);

/** Any subset of the accepted-but-not-applied properties, with any JSON value. */
const features = fc.dictionary(fc.constantFrom(...UNAPPLIED_FEATURES), fc.jsonValue(), { maxKeys: 2 });

const position = optional({
  x: fc.oneof(real(-2000, 2000), fc.constantFrom(...X_KEYWORDS)),
  y: fc.oneof(real(-2000, 2000), fc.constantFrom(...Y_KEYWORDS)),
});

const length = fc.oneof(
  real(0.5, 4000),
  fc.integer({ min: 1, max: 400 }).map((p) => `${p}%`),
);

/** startTime, duration and fades that fit in it (each fade at most half of duration). */
const timing = fc
  .record({ startTime: real(0, 200), duration: real(0.1, 60), fadeIn: real(0, 1), fadeOut: real(0, 1) })
  .map(({ duration, fadeIn, fadeOut, ...rest }) => ({
    ...rest,
    duration,
    fadeIn: duration * 0.5 * fadeIn,
    fadeOut: duration * 0.5 * fadeOut,
  }));

function videoClip(urls: string[]): fc.Arbitrary<Json> {
  return fc
    .record({
      src: fc.constantFrom(...urls),
      in: real(0, 100),
      span: real(0.01, 30),
      // From 1 s on, so that even the shortest sped-up clip leaves the timeline a frame long at 1 fps.
      startTime: real(1, 200),
      extra: optional({
        speed: real(0.1, 100),
        mute: fc.boolean(),
        volume: real(-20, 20),
        replaceAudio: fc.constantFrom(...urls),
      }),
      features,
    })
    .map(({ span, extra, features, ...clip }) => ({ ...clip, out: clip.in + span, ...extra, ...features }));
}

function overlayClip(urls: string[]): fc.Arbitrary<Json> {
  return fc
    .record({
      src: fc.constantFrom(...urls),
      timing,
      extra: optional({
        position,
        size: optional({ width: length, height: length }),
        opacity: real(0, 1),
        blendMode: fc.constantFrom(...BLEND_MODES),
      }),
      features,
    })
    .map(({ timing, extra, features, ...clip }) => ({ ...clip, ...timing, ...extra, ...features }));
}

const textClip: fc.Arbitrary<Json> = fc
  .record({
    text: fc.string({ minLength: 1 }).filter((s) => s.trim() !== ""),
    timing,
    extra: optional({
      fontSize: real(1, 1000),
      fontColor: hexColor,
      fontFamily: fc.constantFrom("Arial", "DejaVu Sans", "Liberation Serif"),
      fontWeight: fc.constantFrom(...FONT_WEIGHTS),
      textAlign: fc.constantFrom(...TEXT_ALIGNS),
      position,
      background: optional({ color: hexColor, opacity: real(0, 1), padding: real(0, 50) }),
      outline: optional({ color: hexColor, width: real(0, 10) }),
      shadow: optional({ color: hexColor, offsetX: real(-20, 20), offsetY: real(-20, 20), blur: real(0, 10) }),
    }),
    features,
  })
  .map(({ timing, extra, features, ...clip }) => ({ ...clip, ...timing, ...extra, ...features }));

export interface TimelineShape {
  /** Video clips: at least one. */
  maxVideoClips: number;
  /** Overlay and text tracks besides the video track. */
  maxExtraTracks: number;
  maxClipsPerExtraTrack: number;
  /** Size of the URL pool clips draw from, which bounds the distinct assets. */
  urls: number;
}

/** A valid EDL document within `shape`; tracks come in any order and clip ids are unique. */
export function validEdl(shape: TimelineShape): fc.Arbitrary<Json> {
  const urls = Array.from({ length: shape.urls }, (_, i) => `https://media.example.com/asset-${i}`);
  const extraTrack = fc.oneof(
    fc
      .array(overlayClip(urls), { maxLength: shape.maxClipsPerExtraTrack })
      .map((clips) => ({ type: "overlay", clips })),
    fc.array(textClip, { maxLength: shape.maxClipsPerExtraTrack }).map((clips) => ({ type: "text", clips })),
  );
  const videoTrack = fc
    .array(videoClip(urls), { minLength: 1, maxLength: shape.maxVideoClips })
    .map((clips) => ({ type: "video", clips }));
  const tracks = fc
    .tuple(videoTrack, fc.array(extraTrack, { maxLength: shape.maxExtraTracks }))
    .chain(([video, extra]) => fc.shuffledSubarray([video, ...extra], { minLength: extra.length + 1 }))
    .map((list) =>
      list.map((t, i) => ({
        ...t,
        clips: t.clips.map((clip: Json, j: number) => ({ id: `clip-${i}-${j}`, ...clip })),
      })),
    );
  return fc.record(
    {
      version: fc.constant("1.0"),
      output,
      timeline: tracks.map((t) => ({ tracks: t })),
      metadata: fc.dictionary(fc.string(), fc.jsonValue()),
    },
    { requiredKeys: ["version", "timeline"] },
  );
}

/** Anything JavaScript can hold, including what JSON cannot (null prototypes, boxed values, bigint). */
export const junk = fc.anything({
  withNullPrototype: true,
  withBoxedValues: true,
  withBigInt: true,
  withSparseArray: true,
  withTypedArray: true,
  withDate: true,
  withMap: true,
  withSet: true,
  maxDepth: 3,
});

const CLIP_FIELDS = [
  "id",
  "src",
  "in",
  "out",
  "startTime",
  "speed",
  "mute",
  "volume",
  "replaceAudio",
  "duration",
  "position",
  "size",
  "opacity",
  "fadeIn",
  "fadeOut",
  "blendMode",
  "text",
  "fontSize",
  "fontColor",
  "fontFamily",
  "fontWeight",
  "textAlign",
  "background",
  "outline",
  "shadow",
  ...UNAPPLIED_FEATURES,
];
const OUTPUT_FIELDS = [
  "resolution",
  "fps",
  "container",
  "videoCodec",
  "audioCodec",
  "videoBitrate",
  "audioBitrate",
  "preset",
  "crf",
];

/** The EDL's shape with the contract's field names (docs/contract.md §3.10–§3.14), holding junk. */
export const edlShapedJunk: fc.Arbitrary<unknown> = (() => {
  const value = fc.oneof(
    junk,
    fc.jsonValue(),
    real(-1e6, 1e6),
    fc.constantFrom("1.0", "center", "50%", "#fff", "128k", "1280x720", "https://x.test/a", "mp4", "webm"),
  );
  const clip = fc.oneof(fc.dictionary(fc.constantFrom(...CLIP_FIELDS), value), value);
  const track = fc.oneof(
    fc.record(
      {
        type: fc.oneof(fc.constantFrom("video", "overlay", "text"), value),
        clips: fc.oneof(fc.array(clip, { maxLength: 6 }), value),
      },
      { requiredKeys: [] },
    ),
    value,
  );
  return fc.record(
    {
      version: fc.oneof(fc.constant("1.0"), value),
      output: fc.oneof(fc.dictionary(fc.constantFrom(...OUTPUT_FIELDS), value), value),
      timeline: fc.oneof(fc.record({ tracks: fc.oneof(fc.array(track, { maxLength: 4 }), value) }), value),
      metadata: value,
    },
    { requiredKeys: [] },
  );
})();

/** Every path to a value inside `value`, for mutating one spot of a valid document. */
export function pathsOf(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== "object" || value === null) return [];
  const keys = Array.isArray(value) ? value.map((_, i) => i) : Object.keys(value);
  return keys.flatMap((key) => [
    [...prefix, key],
    ...pathsOf((value as Record<string | number, unknown>)[key], [...prefix, key]),
  ]);
}

/**
 * A deep copy of `document` with the value at `path` replaced, or removed when `replacement`
 * is undefined. A path that an earlier change cut off, or that runs into junk, is left alone.
 */
export function mutate(document: unknown, path: (string | number)[], replacement: unknown): unknown {
  const copy = structuredClone(document);
  const isContainer = (node: unknown): node is Record<string | number, unknown> =>
    Array.isArray(node) ||
    (typeof node === "object" && node !== null && Object.getPrototypeOf(node) === Object.prototype);
  let parent: unknown = copy;
  for (const key of path.slice(0, -1)) parent = isContainer(parent) ? parent[key] : undefined;
  if (!isContainer(parent)) return copy;
  const last = path[path.length - 1];
  if (replacement === undefined) delete parent[last];
  else parent[last] = replacement;
  return copy;
}
