/** Parsers for the EDL's string formats, with what each expects. Each returns `undefined` for anything it refuses. */
import type { Length, Resolution } from "./validated-edl";
import { POSITION_KEYWORDS } from "./validated-edl";

/**
 * yuv420p (what every output codec is fed) halves chroma in both directions, so libx264
 * refuses odd sizes ("width not divisible by 2"). 16 is below any real use; 7680 is 8K UHD.
 */
const RESOLUTION_RULE = { min: 16, max: 7680 } as const;
export const RESOLUTION_EXPECTED = `WIDTHxHEIGHT with even numbers from ${RESOLUTION_RULE.min} to ${RESOLUTION_RULE.max}, such as "1280x720"`;

export function parseResolution(value: unknown): Resolution | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(value);
  if (!match) return undefined;
  const [width, height] = [Number(match[1]), Number(match[2])];
  const fits = (side: number) => side % 2 === 0 && side >= RESOLUTION_RULE.min && side <= RESOLUTION_RULE.max;
  return fits(width) && fits(height) ? { width, height } : undefined;
}

/** Kilobits per second, as FFmpeg's `-b:v`/`-b:a` take them: a whole number followed by "k". */
export function bitrateParser(minKbps: number, maxKbps: number): (value: unknown) => string | undefined {
  return (value) => {
    if (typeof value !== "string" || !/^[1-9]\d{0,6}k$/.test(value)) return undefined;
    const kbps = Number(value.slice(0, -1));
    return kbps >= minKbps && kbps <= maxKbps ? value : undefined;
  };
}

/** #RGB, #RRGGBB or #RRGGBBAA, returned as upper-case #RRGGBB[AA] so the encoder sees one form. */
export function parseHexColor(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const match = /^#([0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/i.exec(value);
  if (!match) return undefined;
  const digits = match[1].length === 3 ? [...match[1]].map((d) => d + d).join("") : match[1];
  return `#${digits.toUpperCase()}`;
}
export const HEX_COLOR_EXPECTED = 'a hex colour such as "#FFF", "#FFFFFF" or "#FFFFFF80"';

/** Pixel sizes and positions stay within twice an 8K frame's width. */
export const MAX_PIXELS = 16_384;
/** Percent of the output frame; 1000% is already ten frames wide. */
export const MAX_PERCENT = 1000;

/** A positive pixel count, or a positive percentage string of the output frame such as "50%". */
export function parseLength(value: unknown): Length | undefined {
  if (typeof value === "number") return value > 0 && value <= MAX_PIXELS ? { unit: "px", value } : undefined;
  if (typeof value !== "string") return undefined;
  const match = /^(\d{1,4}(?:\.\d+)?)%$/.exec(value);
  const percent = match ? Number(match[1]) : 0;
  return percent > 0 && percent <= MAX_PERCENT ? { unit: "percent", value: percent } : undefined;
}
export const LENGTH_EXPECTED = `a number of pixels above 0 and up to ${MAX_PIXELS}, or a percentage such as "50%" up to ${MAX_PERCENT}%`;

/** A number of pixels, or any of the five keywords (the caller sorts out which axis it suits). */
export function parsePosition(value: unknown): number | (typeof POSITION_KEYWORDS)[number] | undefined {
  if (typeof value === "number") return Math.abs(value) <= MAX_PIXELS ? value : undefined;
  return POSITION_KEYWORDS.includes(value as never) ? (value as (typeof POSITION_KEYWORDS)[number]) : undefined;
}
export const POSITION_EXPECTED = `a number from -${MAX_PIXELS} to ${MAX_PIXELS} or one of ${POSITION_KEYWORDS.join(", ")}`;
