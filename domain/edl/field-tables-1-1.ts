/**
 * The fields version 1.1 adds (docs/timelines.md#version-11): transition, crop,
 * transform, filters and freeze on clips, and the caption track. Rules that need more than one
 * field of a clip (a transition within the clip's length, a freeze within in..out, the video
 * track's adjacency) are the clip readers' (./clips.ts, ./transitions.ts).
 */
import { background, field, id, position, STYLE_FIELDS, seconds, url } from "./field-tables-1-0";
import { array, either, type Kind, number, object, oneOf, text } from "./kinds";
import {
  BACKGROUND_DEFAULTS,
  CAPTION_DEFAULTS,
  type CaptionCue,
  type Crop,
  FILTER_TYPES,
  type Filter,
  type FilterType,
  FLIPS,
  type Freeze,
  LAYER_TRANSITION_TYPES,
  TRANSITION_TYPES,
  type Transform,
  type Transition,
  type TransitionType,
  type TransitionEdge,
} from "./validated-edl";

/** A transition longer than this is a mistake; the clip's own length bounds it further. */
const TRANSITION_RULE = { min: 0, aboveMin: true, max: 60 } as const;
/** An hour of a held frame is already far beyond any edit; more would only inflate the timeline. */
const FREEZE_RULE = { min: 0, aboveMin: true, max: 3600 } as const;
const FRACTION_RULE = { min: 0, max: 1, belowMax: true } as const;
const MAX_FILTERS = 10;
export const MAX_CUES = 5000;

function transition<T extends string>(types: readonly T[], name: string, description: string): Kind<Transition<T>> {
  const edge = object(
    {
      type: field({ kind: oneOf(types), required: true }),
      duration: field({ kind: number(TRANSITION_RULE), required: true, description: "Seconds." }),
    },
    (e): TransitionEdge<T> | undefined => {
      const type = e.read("type");
      const duration = e.read("duration");
      return type !== undefined && duration !== undefined ? { type, duration } : undefined;
    },
    { name: `${name}Edge` },
  );
  return object(
    {
      in: field({ kind: edge, description: "How the clip comes in, from its start." }),
      out: field({ kind: edge, description: "How it goes out, up to its end." }),
    },
    (t): Transition<T> | undefined => {
      const start = t.read("in");
      const end = t.read("out");
      // An empty object asks for nothing: the clip is left without one, and no feature is listed.
      return start || end ? { ...(start && { in: start }), ...(end && { out: end }) } : undefined;
    },
    { name, description },
  );
}

const videoTransition: Kind<Transition<TransitionType>> = transition(
  TRANSITION_TYPES,
  "EdlTransition",
  "`fade` goes through black (and the audio fades); any other type blends with the neighbouring clip on the " +
    "video track, which must overlap this one by exactly `duration` (with black when there is none).",
);
const layerTransition = transition(
  LAYER_TRANSITION_TYPES,
  "EdlLayerTransition",
  "`fade` fades the layer's alpha (give it or `fadeIn`/`fadeOut`, not both); a slide brings it in from, or " +
    "takes it out to, that edge of the frame.",
);

const fraction = (description: string) =>
  field({ kind: number(FRACTION_RULE), default: 0, description: `Fraction of the source frame cut ${description}.` });

const crop = object(
  {
    top: fraction("from the top"),
    bottom: fraction("from the bottom"),
    left: fraction("from the left"),
    right: fraction("from the right"),
  },
  (c): Crop => {
    const value = { top: c.read("top"), bottom: c.read("bottom"), left: c.read("left"), right: c.read("right") };
    if (value.top + value.bottom >= 1) c.fail("bottom", "top and bottom together must be below 1");
    if (value.left + value.right >= 1) c.fail("right", "left and right together must be below 1");
    return value;
  },
  { name: "EdlCrop", description: "Cut from the source frame before anything else; what is left is fitted as usual." },
);

const transform = object(
  {
    rotate: field({ kind: number({ min: -360, max: 360 }), default: 0, description: "Degrees clockwise." }),
    flip: field({ kind: oneOf(FLIPS), description: "Mirrors the picture, before the rotation." }),
    scale: field({ kind: number({ min: 0.01, max: 10 }), default: 1, description: "Multiplies the fitted size." }),
  },
  (t): Transform => {
    const rotate = t.read("rotate");
    const flip = t.read("flip");
    return { rotate, ...(flip && { flip }), scale: t.read("scale") };
  },
  { name: "EdlTransform", description: "Applied after crop, before placement: flip, then rotate, then scale." },
);

const strength = field({ kind: number({ min: 0, max: 1 }), default: 1, description: "0 leaves the picture as it is." });
const filter = either<Filter>(
  [
    {
      test: (value) => typeof value === "string",
      kind: {
        ...oneOf(FILTER_TYPES),
        read: (value, path, issues) => {
          const type = oneOf<FilterType>(FILTER_TYPES).read(value, path, issues);
          return type && { type, strength: strength.default };
        },
      },
    },
    {
      test: (value) => typeof value === "object" && value !== null && !Array.isArray(value),
      kind: object(
        { type: field({ kind: oneOf(FILTER_TYPES), required: true }), strength },
        (f): Filter | undefined => {
          const type = f.read("type");
          const value = f.read("strength");
          return type && { type, strength: value };
        },
        { name: "EdlFilter" },
      ),
    },
  ],
  'a filter name such as "greyscale", or an object {type, strength}',
);
const filters = array(filter, MAX_FILTERS);

const freeze = object(
  {
    at: field({ kind: seconds, required: true, description: "Source time of the held frame, from `in` to `out`." }),
    duration: field({ kind: number(FREEZE_RULE), required: true, description: "Seconds the frame is held." }),
  },
  (f): Freeze | undefined => {
    const at = f.read("at");
    const duration = f.read("duration");
    return at !== undefined && duration !== undefined ? { at, duration } : undefined;
  },
  {
    name: "EdlFreeze",
    description: "Holds one frame; the clip grows by `duration` on the timeline, and its audio is silent meanwhile.",
  },
);

/** What the reference shows for each field. */
const CROP_EXAMPLE = { top: 0, bottom: 0.1, left: 0.05, right: 0.05 };
const TRANSFORM_EXAMPLE = { rotate: 90, flip: "horizontal", scale: 1 };
const FILTERS_EXAMPLE = ["greyscale", { type: "blur", strength: 0.3 }];
const FILTERS_DESCRIPTION = `At most ${MAX_FILTERS}, applied in order; a name alone means strength 1.`;
const LAYER_TRANSITION_EXAMPLE = { in: { type: "slideLeft", duration: 0.5 }, out: { type: "fade", duration: 0.5 } };

export const VIDEO_FIELDS_1_1 = {
  transition: field({ kind: videoTransition, example: { in: { type: "crossfade", duration: 0.5 } } }),
  crop: field({ kind: crop, example: CROP_EXAMPLE }),
  transform: field({ kind: transform, example: TRANSFORM_EXAMPLE }),
  filters: field({ kind: filters, description: FILTERS_DESCRIPTION, example: FILTERS_EXAMPLE }),
  freeze: field({ kind: freeze, example: { at: 2, duration: 1.5 } }),
};

export const OVERLAY_FIELDS_1_1 = {
  transition: field({ kind: layerTransition, example: LAYER_TRANSITION_EXAMPLE }),
  crop: field({ kind: crop, example: CROP_EXAMPLE }),
  transform: field({ kind: transform, example: TRANSFORM_EXAMPLE }),
  filters: field({ kind: filters, description: FILTERS_DESCRIPTION, example: FILTERS_EXAMPLE }),
};

export const TEXT_FIELDS_1_1 = { transition: field({ kind: layerTransition, example: LAYER_TRANSITION_EXAMPLE }) };

const cue = object(
  {
    start: field({ kind: seconds, required: true, description: "Seconds from the clip's `startTime`." }),
    end: field({ kind: seconds, required: true, description: "Greater than `start`." }),
    text: field({ kind: text(), required: true, description: "Line breaks make lines." }),
  },
  (c): CaptionCue | undefined => {
    const start = c.read("start");
    const end = c.read("end");
    if (start !== undefined && end !== undefined && end <= start) c.fail("end", "must be greater than start");
    const text = c.read("text");
    return start !== undefined && end !== undefined && end > start && text !== undefined
      ? { start, end, text }
      : undefined;
  },
  { name: "EdlCaptionCue" },
);

export const CAPTION_FIELDS = {
  id,
  startTime: field({
    kind: seconds,
    default: CAPTION_DEFAULTS.startTime,
    description: "Added to every cue's times.",
  }),
  src: field({
    kind: url,
    description: "An SRT or WebVTT file (WebVTT when its first line is `WEBVTT`); one asset. Give `src` or `cues`.",
    example: "https://media.example.com/captions.vtt",
  }),
  cues: field({
    kind: array(cue, MAX_CUES),
    description: `Inline cues, sorted by start, at most ${MAX_CUES}. Give \`src\` or \`cues\`.`,
    example: [
      { start: 0.5, end: 3, text: "Spring is here" },
      { start: 3.5, end: 6, text: "Everything\nis new" },
    ],
  }),
  ...STYLE_FIELDS,
  position: field({ kind: position, default: CAPTION_DEFAULTS.position }),
  background: field({ kind: background, default: BACKGROUND_DEFAULTS }),
};
