import type { Length, OverlayClip, Position, Resolution } from "../../domain/edl/validated-edl";

/** Pixels of `length` along an axis of `frame` pixels (percentages are of the output frame). */
function pixels(length: Length, frame: number): number {
  return length.unit === "px" ? length.value : (frame * length.value) / 100;
}

/** The overlay's drawn size: given sides, the other from the image's aspect, or its natural size. */
export function overlaySize(clip: OverlayClip, frame: Resolution, natural: Resolution): Resolution {
  const w = clip.size?.width ? pixels(clip.size.width, frame.width) : undefined;
  const h = clip.size?.height ? pixels(clip.size.height, frame.height) : undefined;
  const width = w ?? (h !== undefined ? (h * natural.width) / natural.height : natural.width);
  const height = h ?? (w !== undefined ? (w * natural.height) / natural.width : natural.height);
  return { width: Math.max(1, Math.round(width)), height: Math.max(1, Math.round(height)) };
}

/** Top-left corner of a box of `size` placed at `position` in `frame` (numbers are the corner). */
export function placeBox(position: Position, size: Resolution, frame: Resolution): { x: number; y: number } {
  const along = (value: number | string, box: number, room: number) => {
    if (typeof value === "number") return Math.round(value);
    if (value === "left" || value === "top") return 0;
    if (value === "right" || value === "bottom") return room - box;
    return Math.round((room - box) / 2);
  };
  return { x: along(position.x, size.width, frame.width), y: along(position.y, size.height, frame.height) };
}

/** The part of a box inside the frame, or null when none of it is. */
export function visiblePart(box: { x: number; y: number; width: number; height: number }, frame: Resolution) {
  const x = Math.max(0, box.x);
  const y = Math.max(0, box.y);
  const width = Math.min(frame.width, box.x + box.width) - x;
  const height = Math.min(frame.height, box.y + box.height) - y;
  return width > 0 && height > 0 ? { x, y, width, height } : null;
}
