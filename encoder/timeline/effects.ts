import type { Crop, Filter, FilterType, Resolution, Transform } from "../../domain/edl/validated-edl";
import { round } from "./colour";

/**
 * Crop, transform and filters (timeline 1.1) as FFmpeg filters, shared by video and overlay
 * clips (docs/timelines.md#rendering). Pure: each answers the filters to put in a chain.
 */

/** `crop` cuts fractions of the source frame from each side; nothing when every side is 0. */
export function cropFilters(crop: Crop | undefined): string[] {
  if (!crop || (crop.top === 0 && crop.bottom === 0 && crop.left === 0 && crop.right === 0)) return [];
  const w = round(1 - crop.left - crop.right, 6);
  const h = round(1 - crop.top - crop.bottom, 6);
  // exact=1: an odd offset on a subsampled picture is kept, not rounded down a pixel.
  return [`crop=w=iw*${w}:h=ih*${h}:x=iw*${round(crop.left, 6)}:y=ih*${round(crop.top, 6)}:exact=1`];
}

/** The size a frame's source takes after `cropFilters` (FFmpeg truncates, as here). */
export function croppedSize(size: Resolution, crop: Crop | undefined): Resolution {
  if (!crop) return size;
  return {
    width: Math.max(1, Math.trunc(size.width * round(1 - crop.left - crop.right, 6))),
    height: Math.max(1, Math.trunc(size.height * round(1 - crop.top - crop.bottom, 6))),
  };
}

/** Sepia's RGB matrix (the usual one), rows r, g, b. */
const SEPIA = [
  [0.393, 0.769, 0.189],
  [0.349, 0.686, 0.168],
  [0.272, 0.534, 0.131],
];

/** The sepia matrix mixed with the identity by `s`, as colorchannelmixer's options. */
function sepia(s: number): string {
  const names = ["r", "g", "b"];
  const options = SEPIA.flatMap((row, i) =>
    row.map((v, j) => `${names[i]}${names[j]}=${round((i === j ? 1 - s : 0) + v * s, 4)}`),
  );
  return `colorchannelmixer=${options.join(":")}`;
}

/**
 * One filter at `s` (0..1; 1 is its full effect). Blur's radius grows with the picture so a
 * blur looks the same at every output size. Shotstack's names: boost raises contrast and
 * saturation, muted lowers both.
 */
const FILTERS: Record<FilterType, (s: number, height: number) => string> = {
  greyscale: (s) => `hue=s=${round(1 - s)}`,
  sepia,
  blur: (s, height) => `gblur=sigma=${round(Math.max(0.1, (s * height) / 100), 2)}`,
  sharpen: (s) => `unsharp=5:5:${round(1.5 * s)}:5:5:0`,
  lighten: (s) => `eq=brightness=${round(0.25 * s)}`,
  darken: (s) => `eq=brightness=${round(-0.25 * s)}`,
  contrast: (s) => `eq=contrast=${round(1 + s)}`,
  saturate: (s) => `eq=saturation=${round(1 + s)}`,
  // Each channel moved toward its complement by s: at 1, the negative.
  negative: (s) => {
    const k = round(1 - 2 * s);
    const each = `val*${k}+maxval*${round(s)}`;
    return `lutrgb=r='${each}':g='${each}':b='${each}'`;
  },
  boost: (s) => `eq=contrast=${round(1 + 0.3 * s)}:saturation=${round(1 + 0.5 * s)}`,
  muted: (s) => `eq=contrast=${round(1 - 0.3 * s)}:saturation=${round(1 - 0.5 * s)}`,
};

/** The clip's filters in order, `height` being the picture's they apply to. */
export function filterFilters(filters: Filter[] | undefined, height: number): string[] {
  return (filters ?? []).map((f) => FILTERS[f.type](f.strength, height));
}

const FLIP_FILTERS = { horizontal: ["hflip"], vertical: ["vflip"], both: ["hflip", "vflip"] } as const;

/** Degrees clockwise brought into [0, 360). */
const normalised = (degrees: number) => ((degrees % 360) + 360) % 360;

/**
 * Flip then rotate. Quarter turns are exact (transpose); other angles grow the box to hold the
 * whole turned picture, filled with `fill` (black for video, transparent for overlays).
 */
export function flipRotateFilters(transform: Transform | undefined, fill: "black" | "none"): string[] {
  if (!transform) return [];
  const flips = transform.flip ? [...FLIP_FILTERS[transform.flip]] : [];
  const degrees = normalised(transform.rotate);
  if (degrees === 0) return flips;
  if (degrees === 90) return [...flips, "transpose=clock"];
  if (degrees === 180) return [...flips, "hflip", "vflip"];
  if (degrees === 270) return [...flips, "transpose=cclock"];
  const a = round((degrees * Math.PI) / 180, 6);
  return [...flips, `rotate=a=${a}:ow=rotw(${a}):oh=roth(${a}):c=${fill}`];
}

/** The box a picture of `size` takes once turned by `rotate` degrees (as rotw/roth compute it). */
export function rotatedSize(size: Resolution, rotate: number): Resolution {
  const a = (normalised(rotate) * Math.PI) / 180;
  const [c, s] = [Math.abs(Math.cos(a)), Math.abs(Math.sin(a))];
  return {
    width: Math.max(1, Math.round(size.width * c + size.height * s)),
    height: Math.max(1, Math.round(size.width * s + size.height * c)),
  };
}
