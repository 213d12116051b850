/** One reader per clip type (docs/contract.md §3.12–§3.14). */
import { isSourceUrl } from "../urls";
import { allRead, type Fields, fieldsOf, type Issues, type JsonObject } from "./fields";
import {
  HEX_COLOR_EXPECTED,
  LENGTH_EXPECTED,
  parseHexColor,
  parseLength,
  parsePosition,
  POSITION_EXPECTED,
} from "./formats";
import {
  BACKGROUND_DEFAULTS,
  BLEND_MODES,
  type Clip,
  DEFAULT_POSITION,
  FONT_WEIGHTS,
  OUTLINE_DEFAULTS,
  OVERLAY_DEFAULTS,
  type OverlayClip,
  type Position,
  SHADOW_DEFAULTS,
  type Size,
  TEXT_ALIGNS,
  TEXT_DEFAULTS,
  type TextBackground,
  type TextClip,
  type TextOutline,
  type TextShadow,
  VIDEO_DEFAULTS,
  type VideoClip,
  videoClipEnd,
  X_KEYWORDS,
  type XPosition,
  Y_KEYWORDS,
  type YPosition,
} from "./schema";

/**
 * Every time field (seconds) stays below 100 hours, ten times the largest plan's timeline: a
 * larger value is a mistake, and unbounded ones would make stats and estimates overflow.
 */
export const MAX_SECONDS = 360_000;
const SECONDS_RULE = { min: 0, max: MAX_SECONDS } as const;
const DURATION_RULE = { min: 0, aboveMin: true, max: MAX_SECONDS } as const;
/** Decoration sizes in pixels: generous for an 8K frame, small enough to keep FFmpeg's frame math sane. */
const PADDING_RULE = { min: 0, max: 500 } as const;
const STROKE_RULE = { min: 0, max: 100 } as const;
const OFFSET_RULE = { min: -500, max: 500 } as const;

export const SPEED_RULE = { min: 0.1, max: 100 } as const;
export const VOLUME_DB_RULE = { min: -20, max: 20 } as const;
export const OPACITY_RULE = { min: 0, max: 1 } as const;
/** Beyond this drawtext renders glyphs larger than an 8K frame. */
export const FONT_SIZE_RULE = { min: 0, aboveMin: true, max: 1000 } as const;

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
}

const URL_EXPECTED = "an absolute http or https URL without a user name or password, at a public address";
const parseUrl = (value: unknown) => (isSourceUrl(value) ? value : undefined);
const defined = <T>(...values: (T | undefined)[]): T[] => values.filter((v): v is T => v !== undefined);

/**
 * Either axis accepts all five keywords (docs/contract.md §3.13); one that names the other axis
 * (`x: "top"`) has no horizontal meaning, so it centres, with a warning.
 */
function readPosition(f: Fields, issues: Issues): Position {
  const raw = f.object("position");
  if (!raw) return DEFAULT_POSITION;
  const p = fieldsOf(raw, f.path("position"), issues.errors);
  const x = p.parsed("x", parsePosition, POSITION_EXPECTED) ?? DEFAULT_POSITION.x;
  const y = p.parsed("y", parsePosition, POSITION_EXPECTED) ?? DEFAULT_POSITION.y;
  const crossed = (axis: "x" | "y", value: unknown, own: readonly string[]) => {
    if (typeof value !== "string" || own.includes(value)) return false;
    issues.warnings.push(
      `${p.path(axis)}: "${value}" is not a ${axis === "x" ? "horizontal" : "vertical"} position; centred`,
    );
    return true;
  };
  return {
    x: crossed("x", x, X_KEYWORDS) ? "center" : (x as XPosition),
    y: crossed("y", y, Y_KEYWORDS) ? "center" : (y as YPosition),
  };
}

function readSize(f: Fields, errors: string[]): Size | undefined {
  const raw = f.object("size");
  if (!raw) return undefined;
  const s = fieldsOf(raw, f.path("size"), errors);
  const width = s.parsed("width", parseLength, LENGTH_EXPECTED);
  const height = s.parsed("height", parseLength, LENGTH_EXPECTED);
  if (!width && !height) return undefined;
  return { ...(width && { width }), ...(height && { height }) };
}

/** startTime, duration and the fades shared by overlay and text clips. */
function readTiming(f: Fields) {
  const startTime = f.number("startTime", { ...SECONDS_RULE, required: true });
  const duration = f.number("duration", { ...DURATION_RULE, required: true });
  const fadeIn = f.number("fadeIn", SECONDS_RULE) ?? 0;
  const fadeOut = f.number("fadeOut", SECONDS_RULE) ?? 0;
  if (duration !== undefined && fadeIn + fadeOut > duration) {
    f.fail("fadeOut", "fadeIn and fadeOut together must not exceed duration");
  }
  const span =
    startTime !== undefined && duration !== undefined ? { start: startTime, end: startTime + duration } : undefined;
  return { startTime, duration, fadeIn, fadeOut, span };
}

function readColor(f: Fields, key: string, fallback: string): string {
  return f.parsed(key, parseHexColor, HEX_COLOR_EXPECTED) ?? fallback;
}

export function readVideoClip(source: JsonObject, path: string, issues: Issues): ClipReading<VideoClip> {
  const before = issues.errors.length;
  const f = fieldsOf(source, path, issues.errors);
  const id = f.string("id", true);
  const src = f.parsed("src", parseUrl, URL_EXPECTED, true);
  const inPoint = f.number("in", { ...SECONDS_RULE, required: true });
  const outPoint = f.number("out", { ...SECONDS_RULE, required: true });
  if (inPoint !== undefined && outPoint !== undefined && outPoint <= inPoint) f.fail("out", "must be greater than in");
  const startTime = f.number("startTime", { ...SECONDS_RULE, required: true });
  const speed = f.number("speed", SPEED_RULE) ?? VIDEO_DEFAULTS.speed;
  const mute = f.boolean("mute") ?? VIDEO_DEFAULTS.mute;
  const volume = f.number("volume", VOLUME_DB_RULE) ?? VIDEO_DEFAULTS.volume;
  const replaceAudio = f.parsed("replaceAudio", parseUrl, URL_EXPECTED);
  if (mute && replaceAudio) issues.warnings.push(`${path}: mute is true, so replaceAudio is not heard`);

  const timed = inPoint !== undefined && outPoint !== undefined && outPoint > inPoint && startTime !== undefined;
  const span = timed
    ? { start: startTime, end: videoClipEnd({ startTime, in: inPoint, out: outPoint, speed }) }
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
        }
      : undefined,
    span,
    urls: defined(src, replaceAudio),
    speedChange: speed !== VIDEO_DEFAULTS.speed,
    blend: false,
  };
}

export function readOverlayClip(source: JsonObject, path: string, issues: Issues): ClipReading<OverlayClip> {
  const before = issues.errors.length;
  const f = fieldsOf(source, path, issues.errors);
  const id = f.string("id", true);
  // Whether it really is a PNG or JPG is learnt when the worker fetches it, as for any source.
  const src = f.parsed("src", parseUrl, URL_EXPECTED, true);
  const { startTime, duration, fadeIn, fadeOut, span } = readTiming(f);
  const position = readPosition(f, issues);
  const size = readSize(f, issues.errors);
  const opacity = f.number("opacity", OPACITY_RULE) ?? OVERLAY_DEFAULTS.opacity;
  const blendMode = f.oneOf("blendMode", BLEND_MODES) ?? OVERLAY_DEFAULTS.blendMode;

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
        }
      : undefined,
    span,
    urls: defined(src),
    speedChange: false,
    blend: blendMode !== OVERLAY_DEFAULTS.blendMode,
  };
}

function readBackground(f: Fields, errors: string[]): TextBackground | undefined {
  const raw = f.object("background");
  if (!raw) return undefined;
  const b = fieldsOf(raw, f.path("background"), errors);
  return {
    color: readColor(b, "color", BACKGROUND_DEFAULTS.color),
    opacity: b.number("opacity", OPACITY_RULE) ?? BACKGROUND_DEFAULTS.opacity,
    padding: b.number("padding", PADDING_RULE) ?? BACKGROUND_DEFAULTS.padding,
  };
}

function readOutline(f: Fields, errors: string[]): TextOutline | undefined {
  const raw = f.object("outline");
  if (!raw) return undefined;
  const o = fieldsOf(raw, f.path("outline"), errors);
  return {
    color: readColor(o, "color", OUTLINE_DEFAULTS.color),
    width: o.number("width", STROKE_RULE) ?? OUTLINE_DEFAULTS.width,
  };
}

function readShadow(f: Fields, errors: string[]): TextShadow | undefined {
  const raw = f.object("shadow");
  if (!raw) return undefined;
  const s = fieldsOf(raw, f.path("shadow"), errors);
  return {
    color: readColor(s, "color", SHADOW_DEFAULTS.color),
    offsetX: s.number("offsetX", OFFSET_RULE) ?? SHADOW_DEFAULTS.offsetX,
    offsetY: s.number("offsetY", OFFSET_RULE) ?? SHADOW_DEFAULTS.offsetY,
    blur: s.number("blur", STROKE_RULE) ?? SHADOW_DEFAULTS.blur,
  };
}

/**
 * The longest family name: real ones are a few words. The name is an argument to fontconfig's
 * fc-match, where a long one failed the spawn (E2BIG), retried as an internal error.
 */
export const MAX_FONT_FAMILY_LENGTH = 100;

export function readTextClip(source: JsonObject, path: string, issues: Issues): ClipReading<TextClip> {
  const before = issues.errors.length;
  const f = fieldsOf(source, path, issues.errors);
  const id = f.string("id", true);
  const text = f.string("text", true);
  const { startTime, duration, fadeIn, fadeOut, span } = readTiming(f);
  const fontSize = f.number("fontSize", FONT_SIZE_RULE) ?? TEXT_DEFAULTS.fontSize;
  const fontColor = readColor(f, "fontColor", TEXT_DEFAULTS.fontColor);
  const family = f.string("fontFamily");
  const fontFamily =
    (family && family.length > MAX_FONT_FAMILY_LENGTH
      ? f.fail("fontFamily", `must be at most ${MAX_FONT_FAMILY_LENGTH} characters`)
      : family) ?? TEXT_DEFAULTS.fontFamily;
  const fontWeight = f.oneOf("fontWeight", FONT_WEIGHTS) ?? TEXT_DEFAULTS.fontWeight;
  const textAlign = f.oneOf("textAlign", TEXT_ALIGNS) ?? TEXT_DEFAULTS.textAlign;
  const position = readPosition(f, issues);
  const background = readBackground(f, issues.errors);
  const outline = readOutline(f, issues.errors);
  const shadow = readShadow(f, issues.errors);
  // drawtext has no blur: the shadow is drawn sharp, and the client hears of it.
  if (shadow?.blur)
    issues.warnings.push(`${f.path("shadow")}.blur: shadow blur is not applied; the shadow is drawn sharp`);

  const required = issues.errors.length === before ? allRead({ id, text, startTime, duration }) : undefined;
  return {
    clip: required
      ? {
          ...required,
          fontSize,
          fontColor,
          fontFamily,
          fontWeight,
          textAlign,
          position,
          ...(background && { background }),
          ...(outline && { outline }),
          ...(shadow && { shadow }),
          fadeIn,
          fadeOut,
        }
      : undefined,
    span,
    urls: [],
    speedChange: false,
    blend: false,
  };
}
