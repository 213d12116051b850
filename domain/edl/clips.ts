/**
 * One reader per clip type (docs/contract.md §3.12–§3.14), with the fields of
 * ./field-tables-1-0.ts and, in version 1.1, of ./field-tables-1-1.ts.
 */
import { allRead, type Issues, type JsonObject } from "./fields";
import { OVERLAY_FIELDS, type STYLE_FIELDS, TEXT_FIELDS, type TIMING_FIELDS, VIDEO_FIELDS } from "./field-tables-1-0";
import { OVERLAY_FIELDS_1_1, TEXT_FIELDS_1_1, VIDEO_FIELDS_1_1 } from "./field-tables-1-1";
import { type Fields, fieldsOf } from "./kinds";
import {
  type Clip,
  type EdlFeature,
  type EdlVersion,
  type LayerTransition,
  OVERLAY_DEFAULTS,
  type OverlayClip,
  type TextClip,
  type TextShadow,
  type Transition,
  VIDEO_DEFAULTS,
  type VideoClip,
  videoClipEnd,
} from "./validated-edl";

/** What a clip contributes to stats, limits and overlap checks, read even when the clip is invalid. */
export interface ClipReading<C extends Clip> {
  /**
   * Present only when the clip added no error, which means every required field was read
   * (hence the non-null assertions where it is built).
   */
  clip?: C;
  /** Timeline interval, when its fields are readable. */
  span?: { start: number; end: number };
  /** Valid URLs the clip fetches. */
  urls: string[];
  speedChange: boolean;
  blend: boolean;
  /** The 1.1 properties the clip applies, for `stats.features`. */
  features: EdlFeature[];
  /** Complexity points of its 1.1 properties (./complexity.ts). */
  effects: number;
}

/** The 1.1 properties of a clip, each when given: what `stats.features` and the complexity count. */
function effectsOf(
  clip: Partial<Pick<VideoClip, "crop" | "transform" | "filters" | "freeze">> & { transition?: Transition<string> },
  layer = false,
) {
  const features: EdlFeature[] = [];
  if (clip.transition) features.push("transition");
  if (clip.crop) features.push("crop");
  if (clip.transform) features.push("transform");
  if (clip.filters?.length) features.push("filters");
  if (clip.freeze) features.push("freeze");
  // A video track's xfades are counted by ./transitions.ts; its fades, and a layer's every
  // transition, cost a filter each, as do a crop, a transform, each filter and a freeze.
  const edges = [clip.transition?.in, clip.transition?.out].filter((edge) => edge && (layer || edge.type === "fade"));
  const effects =
    edges.length + (clip.crop ? 1 : 0) + (clip.transform ? 1 : 0) + (clip.filters?.length ?? 0) + (clip.freeze ? 1 : 0);
  return { features, effects };
}

/** Each transition edge no longer than `length` (the clip's on the timeline). */
function checkTransitionLengths(f: Fields, transition: Transition<string> | undefined, length: number | undefined) {
  if (!transition || length === undefined) return;
  for (const side of ["in", "out"] as const) {
    const edge = transition[side];
    if (edge && edge.duration > length + 1e-9)
      f.fail(
        `transition.${side}.duration`,
        `must be at most the clip's length on the timeline, ${+length.toFixed(3)} s`,
      );
  }
}

/**
 * A layer's transitions: together within its duration, and a `fade` not given beside the fade
 * field that does the same (`fadeIn` for `in`, `fadeOut` for `out`).
 */
function checkLayerTransition(f: Fields, transition: LayerTransition | undefined, duration: number | undefined) {
  if (!transition) return;
  for (const [side, fadeField] of [
    ["in", "fadeIn"],
    ["out", "fadeOut"],
  ] as const) {
    if (transition[side]?.type === "fade" && f.has(fadeField))
      f.fail(`transition.${side}.type`, `must not be fade when ${fadeField} is given: they do the same`);
  }
  const total = (transition.in?.duration ?? 0) + (transition.out?.duration ?? 0);
  if (duration !== undefined && total > duration + 1e-9)
    f.fail("transition.out.duration", "transition.in and transition.out together must not exceed duration");
}

/** Each clip type's fields in both versions: a reader of 1.0 leaves the 1.1 ones unread. */
const VIDEO_TABLE = { ...VIDEO_FIELDS, ...VIDEO_FIELDS_1_1 };
const OVERLAY_TABLE = { ...OVERLAY_FIELDS, ...OVERLAY_FIELDS_1_1 };
const TEXT_TABLE = { ...TEXT_FIELDS, ...TEXT_FIELDS_1_1 };

const defined = <T>(...values: (T | undefined)[]): T[] => values.filter((v): v is T => v !== undefined);

/** startTime, duration and the fades shared by overlay and text clips; the fades fit in the duration. */
function readTiming(f: Fields<typeof TIMING_FIELDS>) {
  const startTime = f.read("startTime");
  const duration = f.read("duration");
  const fadeIn = f.read("fadeIn");
  const fadeOut = f.read("fadeOut");
  if (duration !== undefined && fadeIn + fadeOut > duration) {
    f.fail("fadeOut", "fadeIn and fadeOut together must not exceed duration");
  }
  const span =
    startTime !== undefined && duration !== undefined ? { start: startTime, end: startTime + duration } : undefined;
  return { startTime, duration, fadeIn, fadeOut, span };
}

const NO_EFFECTS = { features: [], effects: 0 };

export function readVideoClip(
  source: JsonObject,
  path: string,
  issues: Issues,
  version: EdlVersion,
): ClipReading<VideoClip> {
  const before = issues.errors.length;
  const f = fieldsOf(source, path, issues, VIDEO_TABLE);
  const id = f.read("id");
  const src = f.read("src");
  const inPoint = f.read("in");
  const outPoint = f.read("out");
  if (inPoint !== undefined && outPoint !== undefined && outPoint <= inPoint) f.fail("out", "must be greater than in");
  const startTime = f.read("startTime");
  const speed = f.read("speed");
  const mute = f.read("mute");
  const volume = f.read("volume");
  const replaceAudio = f.read("replaceAudio");
  if (mute && replaceAudio) issues.warnings.push(`${path}: mute is true, so replaceAudio is not heard`);
  const added = version === "1.1" ? readVideoEffects(f, inPoint, outPoint, speed) : {};

  const timed = inPoint !== undefined && outPoint !== undefined && outPoint > inPoint && startTime !== undefined;
  const span = timed
    ? { start: startTime, end: videoClipEnd({ startTime, in: inPoint, out: outPoint, speed, freeze: added.freeze }) }
    : undefined;
  const required =
    issues.errors.length === before ? allRead({ id, src, in: inPoint, out: outPoint, startTime }) : undefined;
  return {
    clip: required
      ? {
          ...required,
          speed,
          mute,
          volume,
          ...(replaceAudio && { replaceAudio }),
          ...added,
        }
      : undefined,
    span,
    urls: defined(src, replaceAudio),
    speedChange: speed !== VIDEO_DEFAULTS.speed,
    blend: false,
    ...effectsOf(added),
  };
}

/** A video clip's 1.1 properties, each present when given, checked against its source span. */
function readVideoEffects(
  f: Fields<typeof VIDEO_TABLE>,
  inPoint: number | undefined,
  outPoint: number | undefined,
  speed: number,
): Pick<VideoClip, "transition" | "crop" | "transform" | "filters" | "freeze"> {
  const transition = f.read("transition");
  const crop = f.read("crop");
  const transform = f.read("transform");
  const filters = f.read("filters");
  const freeze = f.read("freeze");
  const spanned = inPoint !== undefined && outPoint !== undefined && outPoint > inPoint;
  if (freeze && spanned && (freeze.at < inPoint || freeze.at > outPoint))
    f.fail("freeze.at", `must be between in and out, ${inPoint} and ${outPoint}`);
  const length = spanned ? (outPoint - inPoint) / speed + (freeze?.duration ?? 0) : undefined;
  checkTransitionLengths(f, transition, length);
  return {
    ...(transition && { transition }),
    ...(crop && { crop }),
    ...(transform && { transform }),
    // An empty list applies nothing, so the clip is left without one.
    ...(filters && filters.length > 0 && { filters }),
    ...(freeze && { freeze }),
  };
}

export function readOverlayClip(
  source: JsonObject,
  path: string,
  issues: Issues,
  version: EdlVersion,
): ClipReading<OverlayClip> {
  const before = issues.errors.length;
  const f = fieldsOf(source, path, issues, OVERLAY_TABLE);
  const id = f.read("id");
  // Whether it really is a PNG or JPG is learnt when the worker fetches it, as for any source.
  const src = f.read("src");
  const { startTime, duration, fadeIn, fadeOut, span } = readTiming(f);
  const position = f.read("position");
  const size = f.read("size");
  const opacity = f.read("opacity");
  const blendMode = f.read("blendMode");
  const added = version === "1.1" ? readOverlayEffects(f, duration) : {};

  const required = issues.errors.length === before ? allRead({ id, src, startTime, duration }) : undefined;
  return {
    clip: required
      ? {
          ...required,
          position,
          ...(size && { size }),
          opacity,
          fadeIn,
          fadeOut,
          blendMode,
          ...added,
        }
      : undefined,
    span,
    urls: defined(src),
    speedChange: false,
    blend: blendMode !== OVERLAY_DEFAULTS.blendMode,
    ...effectsOf(added, true),
  };
}

function readOverlayEffects(
  f: Fields<typeof OVERLAY_TABLE>,
  duration: number | undefined,
): Pick<OverlayClip, "transition" | "crop" | "transform" | "filters"> {
  const transition = f.read("transition");
  const crop = f.read("crop");
  const transform = f.read("transform");
  const filters = f.read("filters");
  checkLayerTransition(f, transition, duration);
  return {
    ...(transition && { transition }),
    ...(crop && { crop }),
    ...(transform && { transform }),
    ...(filters && filters.length > 0 && { filters }),
  };
}

/**
 * The text style's fields (./field-tables-1-0.ts STYLE_FIELDS), read in the table's order (the
 * order of their errors) for text and caption clips alike, each with its own table's default; those
 * without a value are left out of the clip. drawtext has no blur: the shadow is drawn sharp, and
 * the client hears of it.
 */
export function readStyle<T extends typeof STYLE_FIELDS>(f: Fields<T>) {
  const { background, outline, shadow, ...always } = {
    fontSize: f.read("fontSize"),
    fontColor: f.read("fontColor"),
    fontFamily: f.read("fontFamily"),
    fontWeight: f.read("fontWeight"),
    textAlign: f.read("textAlign"),
    position: f.read("position"),
    background: f.read("background"),
    outline: f.read("outline"),
    shadow: f.read("shadow"),
  };
  if ((shadow as TextShadow | undefined)?.blur)
    f.issues.warnings.push(`${f.path("shadow")}.blur: shadow blur is not applied; the shadow is drawn sharp`);
  return { ...always, ...(background && { background }), ...(outline && { outline }), ...(shadow && { shadow }) };
}

export function readTextClip(
  source: JsonObject,
  path: string,
  issues: Issues,
  version: EdlVersion,
): ClipReading<TextClip> {
  const before = issues.errors.length;
  const f = fieldsOf(source, path, issues, TEXT_TABLE);
  const id = f.read("id");
  const text = f.read("text");
  const { startTime, duration, fadeIn, fadeOut, span } = readTiming(f);
  const style = readStyle(f);
  const transition = version === "1.1" ? f.read("transition") : undefined;
  checkLayerTransition(f, transition, duration);

  const required = issues.errors.length === before ? allRead({ id, text, startTime, duration }) : undefined;
  return {
    clip: required
      ? {
          ...required,
          ...style,
          fadeIn,
          fadeOut,
          ...(transition && { transition }),
        }
      : undefined,
    span,
    urls: [],
    speedChange: false,
    blend: false,
    ...(transition ? effectsOf({ transition }, true) : NO_EFFECTS),
  };
}
