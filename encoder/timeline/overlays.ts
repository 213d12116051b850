import type { BlendMode, OverlayClip, Resolution } from "../../domain/edl/schema";
import type { GraphBuilder } from "./graph";
import { overlaySize, placeBox, visiblePart } from "./layout";
import { ffSeconds } from "./time";

/** The colour each blend mode leaves unchanged: the image is composited on it. */
const NEUTRAL: Record<Exclude<BlendMode, "normal">, string> = {
  multiply: "white",
  darken: "white",
  screen: "black",
  lighten: "black",
  overlay: "0x808080",
};

const shownDuring = (clip: OverlayClip) => ({ start: clip.startTime, end: clip.startTime + clip.duration });

function fades(clip: OverlayClip, colour?: string): string[] {
  const { start, end } = shownDuring(clip);
  const how = colour ? `color=${colour}` : "alpha=1";
  const fadeIn = ffSeconds(clip.fadeIn);
  const fadeOut = ffSeconds(clip.fadeOut);
  // A fade of 0 s at FFmpeg's resolution is none: given d=0, the fade filter falls back to 25 frames.
  return [
    ...(fadeIn !== "0" ? [`fade=t=in:st=${ffSeconds(start)}:d=${fadeIn}:${how}`] : []),
    ...(fadeOut !== "0" ? [`fade=t=out:st=${ffSeconds(end - clip.fadeOut)}:d=${fadeOut}:${how}`] : []),
  ];
}

export interface ImageInfo {
  path: string;
  width: number;
  height: number;
}

/**
 * Draws one overlay on `base`. The image is a looped input as long as the timeline, so its
 * timestamps match the base's and fades use absolute times; `enable` limits it to its window.
 * Blend modes composite the image on the mode's neutral colour (so opacity and fades become a
 * mix toward it), convert to gbrp (blending in YUV corrupts colour), and blend only the region
 * under the image, which is cropped out and overlaid back.
 */
export function drawOverlay(
  g: GraphBuilder,
  base: string,
  clip: OverlayClip,
  image: ImageInfo,
  frame: Resolution,
  fps: number,
  timelineEnd: number,
): string {
  const size = overlaySize(clip, frame, image);
  const at = placeBox(clip.position, size, frame);
  const { start, end } = shownDuring(clip);
  const enable = `enable='between(t,${ffSeconds(start)},${ffSeconds(end)})'`;
  const input = g.input({
    options: ["-loop", "1", "-framerate", String(fps), "-t", ffSeconds(timelineEnd)],
    path: image.path,
  });
  const scaled = [`scale=${size.width}:${size.height}`, "format=rgba", `colorchannelmixer=aa=${clip.opacity}`];

  if (clip.blendMode === "normal") {
    const layer = g.chain(`[${input}:v:0]`, [...scaled, ...fades(clip)], "ov");
    return g.chain(`${base}${layer}`, [`overlay=x=${at.x}:y=${at.y}:${enable}:eof_action=pass`], "v");
  }

  const region = visiblePart({ ...at, ...size }, frame);
  if (!region) return base;
  const neutral = NEUTRAL[clip.blendMode];
  const picture = g.chain(`[${input}:v:0]`, scaled, "img");
  const backdrop = g.chain(
    "",
    [`color=c=${neutral}:s=${size.width}x${size.height}:r=${fps}:d=${ffSeconds(timelineEnd)}`, "format=rgba"],
    "bg",
  );
  const layer = g.chain(
    `${backdrop}${picture}`,
    [
      "overlay=format=auto",
      ...fades(clip, neutral),
      `crop=${region.width}:${region.height}:${region.x - at.x}:${region.y - at.y}`,
      "format=gbrp",
    ],
    "layer",
  );
  const keep = g.label("keep");
  const cut = g.label("cut");
  g.add(`${base}split=2${keep}${cut}`);
  const under = g.chain(cut, [`crop=${region.width}:${region.height}:${region.x}:${region.y}`, "format=gbrp"], "under");
  const blended = g.chain(`${under}${layer}`, [`blend=all_mode=${clip.blendMode}`, "format=yuv420p"], "blend");
  return g.chain(`${keep}${blended}`, [`overlay=x=${region.x}:y=${region.y}:${enable}`], "v");
}
