import type { TransitionType } from "../../domain/edl/validated-edl";

/**
 * FFmpeg's xfade name for a transition: the camelCase name lower-cased, but `crossfade` is
 * xfade's `fade` and `zoom` its `zoomin` (`fade` itself is drawn with the fade filter, through
 * black, never by xfade).
 */
export function xfadeName(type: TransitionType): string {
  if (type === "crossfade") return "fade";
  if (type === "zoom") return "zoomin";
  return type.toLowerCase();
}
