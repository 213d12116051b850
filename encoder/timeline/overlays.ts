import type { BlendMode, OverlayClip, Resolution } from "../../domain/edl/validated-edl";
import { cropFilters, croppedSize, filterFilters, flipRotateFilters, rotatedSize } from "./effects";
import type { GraphBuilder } from "./graph";
import { layerFades, slideOffsets } from "./layer-motion";
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
  const { fadeIn: inSeconds, fadeOut: outSeconds } = layerFades(clip);
  const fadeIn = ffSeconds(inSeconds);
  const fadeOut = ffSeconds(outSeconds);
  // A fade of 0 s at FFmpeg's resolution is none: given d=0, the fade filter falls back to 25 frames.
  return [
    ...(fadeIn !== "0" ? [`fade=t=in:st=${ffSeconds(start)}:d=${fadeIn}:${how}`] : []),
    ...(fadeOut !== "0" ? [`fade=t=out:st=${ffSeconds(end - outSeconds)}:d=${fadeOut}:${how}`] : []),
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
/**
 * The image as the layer starts from: cropped, its filters applied to the colour while its alpha
 * is kept aside (several of the filters' formats have no alpha, and FFmpeg would drop it). Nothing
 * is added for a clip without them, as in 1.0.
 */
function prepared(g: GraphBuilder, input: number, clip: OverlayClip, height: number): string {
  const source = `[${input}:v:0]`;
  const filters = filterFilters(clip.filters, height);
  const crop = cropFilters(clip.crop);
  if (filters.length === 0) return crop.length === 0 ? source : g.chain(source, crop, "ov");
  const [colour, alpha] = [g.label("colour"), g.label("alpha")];
  g.add(`${source}${[...crop, "format=rgba", "split=2"].join(",")}${colour}${alpha}`);
  const mask = g.chain(alpha, ["alphaextract"], "alpha");
  const painted = g.chain(colour, filters, "colour");
  return g.chain(`${painted}${mask}`, ["alphamerge"], "ov");
}

/**
 * Draws one overlay on `base`. The image is a looped input as long as the timeline, so its
 * timestamps match the base's and fades use absolute times; `enable` limits it to its window.
 * Crop, filters and flip act on the image, then it is scaled to its size (times the transform's
 * scale) and turned, its box grown (transparent) to hold it: the box is what is placed.
 * Blend modes composite the image on the mode's neutral colour (so opacity and fades become a
 * mix toward it), convert to gbrp (blending in YUV corrupts colour), and blend only the region
 * under the image, which is cropped out and overlaid back (the whole frame, for a sliding image).
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
  const natural = croppedSize(image, clip.crop);
  const fitted = overlaySize(clip, frame, natural);
  const scale = clip.transform?.scale ?? 1;
  const size =
    scale === 1
      ? fitted
      : {
          width: Math.max(1, Math.round(fitted.width * scale)),
          height: Math.max(1, Math.round(fitted.height * scale)),
        };
  const box = rotatedSize(size, clip.transform?.rotate ?? 0);
  const at = placeBox(clip.position, box, frame);
  const { start, end } = shownDuring(clip);
  const enable = `enable='between(t,${ffSeconds(start)},${ffSeconds(end)})'`;
  const input = g.input({
    options: ["-loop", "1", "-framerate", String(fps), "-t", ffSeconds(timelineEnd)],
    path: image.path,
  });
  const source = prepared(g, input, clip, natural.height);
  const { flip, rotate = 0 } = clip.transform ?? {};
  const scaled = [
    ...flipRotateFilters(flip ? { flip, rotate: 0, scale: 1 } : undefined, "none"),
    `scale=${size.width}:${size.height}`,
    "format=rgba",
    ...flipRotateFilters(rotate ? { rotate, scale: 1 } : undefined, "none"),
    `colorchannelmixer=aa=${clip.opacity}`,
  ];

  const slide = slideOffsets(clip, end, "W", "H");
  const x = slide.x ? `'${at.x}${slide.x}'` : `${at.x}`;
  const y = slide.y ? `'${at.y}${slide.y}'` : `${at.y}`;
  if (clip.blendMode === "normal") {
    const layer = g.chain(source, [...scaled, ...fades(clip)], "ov");
    return g.chain(`${base}${layer}`, [`overlay=x=${x}:y=${y}:${enable}:eof_action=pass`], "v");
  }

  // A sliding image has no fixed region: it is laid on a whole frame of the neutral colour, which
  // is blended with the whole picture.
  const moving = Boolean(slide.x || slide.y);
  const region = moving ? { x: 0, y: 0, ...frame } : visiblePart({ ...at, ...box }, frame);
  if (!region) return base;
  const neutral = NEUTRAL[clip.blendMode];
  const picture = g.chain(source, scaled, "img");
  const ground = moving ? frame : box;
  const backdrop = g.chain(
    "",
    [`color=c=${neutral}:s=${ground.width}x${ground.height}:r=${fps}:d=${ffSeconds(timelineEnd)}`, "format=rgba"],
    "bg",
  );
  const layer = g.chain(
    `${backdrop}${picture}`,
    moving
      ? [`overlay=format=auto:x=${x}:y=${y}`, ...fades(clip, neutral), "format=gbrp"]
      : [
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
