import { JobFailure } from "../failure";

/**
 * The largest picture the encoder decodes: 8192 pixels a side and 8192×4320 (DCI 8K, 35.4
 * megapixels) in all, twice the 4K of the largest preset each way. A file can claim any size in
 * a few bytes (a PNG of 16000×16000 zeros deflates to 31 KB and decodes to 1 GB as RGBA, a frame
 * FFmpeg would decode again for every output frame of a looped overlay). ffprobe and every
 * encoding command are told the limit too (`-max_pixels` on each input), so a decoder refuses a
 * larger picture, the first frame or any later one, before it allocates it.
 */
const MAX_PICTURE_SIDE = 8192;
export const MAX_PICTURE_PIXELS = 8192 * 4320;

export function withinPictureLimits(width: number, height: number): boolean {
  return width <= MAX_PICTURE_SIDE && height <= MAX_PICTURE_SIDE && width * height <= MAX_PICTURE_PIXELS;
}

/** The refusal of a picture over the limits; `what` names it ("the video", "a later frame of the video"). */
export function pictureTooLarge(what: string, width: number, height: number): JobFailure {
  return JobFailure.sourceRefused(
    `${what} is ${width}x${height} pixels; the largest accepted is ${MAX_PICTURE_SIDE} pixels a side ` +
      `and ${(MAX_PICTURE_PIXELS / 1e6).toFixed(1)} megapixels in all (${MAX_PICTURE_SIDE}x${MAX_PICTURE_PIXELS / MAX_PICTURE_SIDE}).`,
  );
}

/**
 * The size a decoder refused, from its log line: over `-max_pixels` ("Picture size WxH exceeds
 * specified max pixel count"), or over FFmpeg's own bound ("Picture size WxH is invalid").
 */
export function refusedPictureSize(line: string): { width: number; height: number } | null {
  const match = /Picture size (\d+)x(\d+) (?:exceeds|is invalid)/.exec(line);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : null;
}
