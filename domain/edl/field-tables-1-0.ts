/**
 * The 1.0 document's fields, table by table (docs/contract.md §3.11–§3.14), which version 1.1
 * extends (./field-tables-1-1.ts): each one's kind and rule, whether it is required, its default
 * and its documentation. The readers (./clips.ts,
 * ./output.ts) read with these tables and ./json-schema.ts turns them into the OpenAPI
 * document's schemas, so the two cannot drift apart.
 */
import { isSourceUrl } from "../urls";
import {
  HEX_COLOR_EXPECTED,
  LENGTH_EXPECTED,
  MAX_PERCENT,
  MAX_PIXELS,
  parseHexColor,
  parseLength,
  parsePosition,
  POSITION_EXPECTED,
} from "./parsers";
import { MAX_TEXT_LINES } from "./limits";
import { anything, boolean, type Field, number, object, oneOf, parsed, text } from "./kinds";
import {
  BACKGROUND_DEFAULTS,
  BLEND_MODES,
  DEFAULT_POSITION,
  FONT_WEIGHTS,
  OUTLINE_DEFAULTS,
  OVERLAY_DEFAULTS,
  POSITION_KEYWORDS,
  SHADOW_DEFAULTS,
  type Size,
  TEXT_ALIGNS,
  TEXT_DEFAULTS,
  type TextBackground,
  type TextOutline,
  type TextShadow,
  UNAPPLIED_FEATURES,
  VIDEO_DEFAULTS,
  X_KEYWORDS,
  type XPosition,
  Y_KEYWORDS,
  type YPosition,
} from "./validated-edl";

/**
 * Every time field (seconds) stays below 100 hours, ten times the largest plan's timeline: a
 * larger value is a mistake, and unbounded ones would make stats and estimates overflow.
 */
const MAX_SECONDS = 360_000;
const SECONDS_RULE = { min: 0, max: MAX_SECONDS } as const;
const DURATION_RULE = { min: 0, aboveMin: true, max: MAX_SECONDS } as const;
/** Decoration sizes in pixels: generous for an 8K frame, small enough to keep FFmpeg's frame math sane. */
const PADDING_RULE = { min: 0, max: 500 } as const;
const STROKE_RULE = { min: 0, max: 100 } as const;
const OFFSET_RULE = { min: -500, max: 500 } as const;
const SPEED_RULE = { min: 0.1, max: 100 } as const;
const VOLUME_DB_RULE = { min: -20, max: 20 } as const;
const OPACITY_RULE = { min: 0, max: 1 } as const;
/** Beyond this drawtext renders glyphs larger than an 8K frame. */
const FONT_SIZE_RULE = { min: 0, aboveMin: true, max: 1000 } as const;
/**
 * The longest family name: real ones are a few words. The name is an argument to fontconfig's
 * fc-match, where a long one failed the spawn (E2BIG), retried as an internal error.
 */
const MAX_FONT_FAMILY_LENGTH = 100;

export const seconds = number(SECONDS_RULE);
const positiveSeconds = number(DURATION_RULE);
const opacity = number(OPACITY_RULE);

const URL_EXPECTED = "an absolute http or https URL without a user name or password, at a public address";
export const url = parsed((value) => (isSourceUrl(value) ? value : undefined), URL_EXPECTED, {
  type: "string",
  format: "uri",
});
const hexColor = parsed(parseHexColor, HEX_COLOR_EXPECTED, {
  type: "string",
  pattern: "^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$",
  example: "#FFFFFF",
});
const coordinate = parsed(parsePosition, POSITION_EXPECTED, {
  anyOf: [
    { type: "number", minimum: -MAX_PIXELS, maximum: MAX_PIXELS },
    { type: "string", enum: [...POSITION_KEYWORDS] },
  ],
});
const length = parsed(parseLength, LENGTH_EXPECTED, {
  anyOf: [
    { type: "number", exclusiveMinimum: 0, maximum: MAX_PIXELS, description: "Pixels." },
    {
      type: "string",
      pattern: "^\\d{1,4}(\\.\\d+)?%$",
      description: `Percent of the output frame, up to ${MAX_PERCENT}%.`,
      example: "25%",
    },
  ],
});

/** A field as written, so that one with a default reads as never undefined (`ValueOf`). */
export function field<T>(f: Field<T> & { default: T }): Field<T> & { default: T };
export function field<T>(f: Field<T>): Field<T>;
export function field<T>(f: Field<T>): Field<T> {
  return f;
}

const POSITION_FIELDS = {
  x: field({ kind: coordinate, default: DEFAULT_POSITION.x }),
  y: field({ kind: coordinate, default: DEFAULT_POSITION.y }),
};

/**
 * Either axis accepts all five keywords (docs/contract.md §3.13); one that names the other axis
 * (`x: "top"`) has no horizontal meaning, so it centres, with a warning.
 */
export const position = object(
  POSITION_FIELDS,
  (p) => {
    const crossed = (axis: "x" | "y", value: unknown, own: readonly string[]) => {
      if (typeof value !== "string" || own.includes(value)) return false;
      p.issues.warnings.push(
        `${p.path(axis)}: "${value}" is not a ${axis === "x" ? "horizontal" : "vertical"} position; centred`,
      );
      return true;
    };
    const x = p.read("x");
    const y = p.read("y");
    return {
      x: crossed("x", x, X_KEYWORDS) ? "center" : (x as XPosition),
      y: crossed("y", y, Y_KEYWORDS) ? "center" : (y as YPosition),
    };
  },
  { name: "EdlPosition", description: "Pixels from the top-left corner, or a keyword; both default to center." },
);

const size = object(
  { width: field({ kind: length }), height: field({ kind: length }) },
  (s): Size | undefined => {
    const width = s.read("width");
    const height = s.read("height");
    if (!width && !height) return undefined;
    return { ...(width && { width }), ...(height && { height }) };
  },
  { description: "A missing side keeps the image's aspect ratio; both missing, its natural size." },
);

export const background = object(
  {
    color: field({ kind: hexColor, default: BACKGROUND_DEFAULTS.color }),
    opacity: field({ kind: opacity, default: BACKGROUND_DEFAULTS.opacity }),
    padding: field({ kind: number(PADDING_RULE), default: BACKGROUND_DEFAULTS.padding, description: "Pixels." }),
  },
  (b): TextBackground => ({ color: b.read("color"), opacity: b.read("opacity"), padding: b.read("padding") }),
  { description: "A box behind the text." },
);

const outline = object(
  {
    color: field({ kind: hexColor, default: OUTLINE_DEFAULTS.color }),
    width: field({ kind: number(STROKE_RULE), default: OUTLINE_DEFAULTS.width, description: "Pixels." }),
  },
  (o): TextOutline => ({ color: o.read("color"), width: o.read("width") }),
);

const shadow = object(
  {
    color: field({ kind: hexColor, default: SHADOW_DEFAULTS.color }),
    offsetX: field({ kind: number(OFFSET_RULE), default: SHADOW_DEFAULTS.offsetX, description: "Pixels." }),
    offsetY: field({ kind: number(OFFSET_RULE), default: SHADOW_DEFAULTS.offsetY, description: "Pixels." }),
    blur: field({ kind: number(STROKE_RULE), default: SHADOW_DEFAULTS.blur }),
  },
  (s): TextShadow => ({
    color: s.read("color"),
    offsetX: s.read("offsetX"),
    offsetY: s.read("offsetY"),
    blur: s.read("blur"),
  }),
  { description: "`blur` is not applied: the shadow is drawn sharp, with a warning." },
);

export const id = field({ kind: text(), required: true, description: "Unique among the timeline's clips." });
/** startTime, duration and the fades shared by overlay and text clips, in reading order. */
export const TIMING_FIELDS = {
  startTime: field({ kind: seconds, required: true, description: "Start on the timeline, seconds." }),
  duration: field({ kind: positiveSeconds, required: true, description: "Seconds on the timeline." }),
  fadeIn: field({ kind: seconds, default: 0, description: "Seconds." }),
  fadeOut: field({ kind: seconds, default: 0, description: "Seconds; with `fadeIn`, at most `duration`." }),
};

export const VIDEO_FIELDS = {
  id,
  src: field({
    kind: url,
    required: true,
    description: "Public http(s) URL; each distinct URL counts once toward the plan's asset limit.",
  }),
  in: field({ kind: seconds, required: true, description: "Start in the source, seconds." }),
  out: field({ kind: seconds, required: true, description: "End in the source, seconds; greater than `in`." }),
  startTime: field({ kind: seconds, required: true, description: "Start on the timeline, seconds." }),
  speed: field({ kind: number(SPEED_RULE), default: VIDEO_DEFAULTS.speed }),
  mute: field({ kind: boolean(), default: VIDEO_DEFAULTS.mute }),
  volume: field({ kind: number(VOLUME_DB_RULE), default: VIDEO_DEFAULTS.volume, description: "Gain in dB." }),
  replaceAudio: field({ kind: url, description: "Audio played instead of the clip's own, from its start." }),
};

/** Version 1.0's clip properties accepted without being applied: any value, named in a warning. */
export const UNAPPLIED_FIELDS = Object.fromEntries(
  UNAPPLIED_FEATURES.map((name) => [
    name,
    field({ kind: anything(), description: "Version 1.0: accepted but not applied (any value)." }),
  ]),
);

export const OVERLAY_FIELDS = {
  id,
  src: field({ kind: url, required: true, description: "A PNG or JPG image." }),
  ...TIMING_FIELDS,
  position: field({ kind: position, default: DEFAULT_POSITION }),
  size: field({ kind: size }),
  opacity: field({ kind: opacity, default: OVERLAY_DEFAULTS.opacity }),
  blendMode: field({ kind: oneOf(BLEND_MODES), default: OVERLAY_DEFAULTS.blendMode }),
};

/** How text is drawn: text clips, and in 1.1 captions, with defaults of their own. */
export const STYLE_FIELDS = {
  fontSize: field({ kind: number(FONT_SIZE_RULE), default: TEXT_DEFAULTS.fontSize, description: "Pixels." }),
  fontColor: field({ kind: hexColor, default: TEXT_DEFAULTS.fontColor }),
  fontFamily: field({ kind: text(MAX_FONT_FAMILY_LENGTH), default: TEXT_DEFAULTS.fontFamily }),
  fontWeight: field({ kind: oneOf(FONT_WEIGHTS), default: TEXT_DEFAULTS.fontWeight }),
  textAlign: field({ kind: oneOf(TEXT_ALIGNS), default: TEXT_DEFAULTS.textAlign }),
  position: field({ kind: position, default: DEFAULT_POSITION }),
  background: field({ kind: background }),
  outline: field({ kind: outline }),
  shadow: field({ kind: shadow }),
};

export const TEXT_FIELDS = {
  id,
  text: field({
    kind: text(),
    required: true,
    description: `One line per line break; at most ${MAX_TEXT_LINES} lines across a timeline's text clips.`,
  }),
  ...TIMING_FIELDS,
  ...STYLE_FIELDS,
};
