import type { LAYER_TRANSITION_TYPES, TransitionEdge } from "../../domain/edl/validated-edl";
import { ffSeconds } from "./time";

type LayerEdge = TransitionEdge<(typeof LAYER_TRANSITION_TYPES)[number]>;
type Layer = { startTime: number; transition?: { in?: LayerEdge; out?: LayerEdge } };

/** A `fade` transition is the clip's own fadeIn/fadeOut (the validator refuses both at once). */
export function layerFades(clip: Layer & { fadeIn: number; fadeOut: number }): { fadeIn: number; fadeOut: number } {
  const { in: edgeIn, out: edgeOut } = clip.transition ?? {};
  return {
    fadeIn: edgeIn?.type === "fade" ? edgeIn.duration : clip.fadeIn,
    fadeOut: edgeOut?.type === "fade" ? edgeOut.duration : clip.fadeOut,
  };
}

/** Which way each slide moves the layer along which axis: +1 right or down, −1 left or up. */
const SLIDES = {
  slideLeft: { axis: "x", sign: -1 },
  slideRight: { axis: "x", sign: 1 },
  slideUp: { axis: "y", sign: -1 },
  slideDown: { axis: "y", sign: 1 },
} as const;

/**
 * Offsets (FFmpeg expressions of `t`, each term signed, to append to a place) that slide a layer
 * in from beyond the frame's edge and out past the other: a slide moves the layer in its
 * direction by a whole frame (`width`, `height`: the expression's names for the frame size), so
 * it starts and ends wholly outside. Empty when no slide moves that axis.
 */
export function slideOffsets(clip: Layer, end: number, width: string, height: string): { x: string; y: string } {
  const terms: Record<"x" | "y", string[]> = { x: [], y: [] };
  const { in: edgeIn, out: edgeOut } = clip.transition ?? {};
  const span = (from: number, d: number) => `clip((t-${ffSeconds(from)})/${ffSeconds(d)},0,1)`;
  if (edgeIn && edgeIn.type !== "fade") {
    const { axis, sign } = SLIDES[edgeIn.type];
    // Coming in moving `sign`-wards: it starts a frame the other way.
    terms[axis].push(
      `${sign > 0 ? "-" : "+"}${axis === "x" ? width : height}*(1-${span(clip.startTime, edgeIn.duration)})`,
    );
  }
  if (edgeOut && edgeOut.type !== "fade") {
    const { axis, sign } = SLIDES[edgeOut.type];
    terms[axis].push(
      `${sign > 0 ? "+" : "-"}${axis === "x" ? width : height}*${span(end - edgeOut.duration, edgeOut.duration)}`,
    );
  }
  return { x: terms.x.join(""), y: terms.y.join("") };
}
