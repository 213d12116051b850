/** One reader per clip type (docs/contract.md §3.12–§3.14), with the fields of ./format.ts. */
import { allRead, type Issues, type JsonObject } from "./fields";
import { OVERLAY_FIELDS, TEXT_FIELDS, type TIMING_FIELDS, VIDEO_FIELDS } from "./format";
import { type Fields, fieldsOf } from "./kinds";
import {
  type Clip,
  OVERLAY_DEFAULTS,
  VIDEO_DEFAULTS,
  type OverlayClip,
  type TextClip,
  type VideoClip,
  videoClipEnd,
} from "./schema";

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

export function readVideoClip(source: JsonObject, path: string, issues: Issues): ClipReading<VideoClip> {
  const before = issues.errors.length;
  const f = fieldsOf(source, path, issues, VIDEO_FIELDS);
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
  const f = fieldsOf(source, path, issues, OVERLAY_FIELDS);
  const id = f.read("id");
  // Whether it really is a PNG or JPG is learnt when the worker fetches it, as for any source.
  const src = f.read("src");
  const { startTime, duration, fadeIn, fadeOut, span } = readTiming(f);
  const position = f.read("position");
  const size = f.read("size");
  const opacity = f.read("opacity");
  const blendMode = f.read("blendMode");

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

export function readTextClip(source: JsonObject, path: string, issues: Issues): ClipReading<TextClip> {
  const before = issues.errors.length;
  const f = fieldsOf(source, path, issues, TEXT_FIELDS);
  const id = f.read("id");
  const text = f.read("text");
  const { startTime, duration, fadeIn, fadeOut, span } = readTiming(f);
  const fontSize = f.read("fontSize");
  const fontColor = f.read("fontColor");
  const fontFamily = f.read("fontFamily");
  const fontWeight = f.read("fontWeight");
  const textAlign = f.read("textAlign");
  const position = f.read("position");
  const background = f.read("background");
  const outline = f.read("outline");
  const shadow = f.read("shadow");
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
