import { type TextClip, textLines } from "../../domain/edl/validated-edl";
import { ffColour } from "./colour";
import type { GraphBuilder } from "./graph";
import { layerFades, slideOffsets } from "./layer-motion";
import { ffSeconds } from "./time";

/** Line advance as a multiple of the font size, for stacking the lines of multi-line text. */
const LINE_SPACING = 1.25;

/**
 * x of a line: a keyword places it in the frame (the margin is the box padding); a number is
 * the alignment point, so `textAlign` says whether it is the line's left edge, centre or right edge.
 */
function lineX(clip: TextClip, margin: number): string {
  const { x } = clip.position;
  if (typeof x === "string") {
    if (x === "left") return `${margin}`;
    if (x === "right") return `w-text_w-${margin}`;
    return "(w-text_w)/2";
  }
  if (clip.textAlign === "center") return `${x}-text_w/2`;
  if (clip.textAlign === "right") return `${x}-text_w`;
  return `${x}`;
}

function lineY(clip: TextClip, margin: number, line: number, lines: number): string {
  const { y } = clip.position;
  const advance = Math.round(clip.fontSize * LINE_SPACING);
  const offset = line * advance;
  const block = lines === 1 ? "text_h" : `${lines * advance}`;
  if (typeof y === "number") return `${y + offset}`;
  if (y === "top") return `${margin + offset}`;
  if (y === "bottom") return `h-${block}-${margin}+${offset}`;
  return `(h-${block})/2+${offset}`;
}

/** Fades as drawtext's alpha, which fades the text, its box, outline and shadow together. */
function alpha(clip: TextClip): string | undefined {
  const start = clip.startTime;
  const end = clip.startTime + clip.duration;
  const seconds = layerFades(clip);
  const fadeIn = ffSeconds(seconds.fadeIn);
  const fadeOut = ffSeconds(seconds.fadeOut);
  // A fade of 0 s at FFmpeg's resolution is none (and would divide by zero).
  let expr = "1";
  if (fadeOut !== "0") expr = `if(gt(t,${ffSeconds(end - seconds.fadeOut)}),(${ffSeconds(end)}-t)/${fadeOut},${expr})`;
  if (fadeIn !== "0") expr = `if(lt(t,${ffSeconds(start + seconds.fadeIn)}),(t-${ffSeconds(start)})/${fadeIn},${expr})`;
  return expr === "1" ? undefined : expr;
}

/**
 * drawtext for one text clip, a filter per line (FFmpeg 5.1's drawtext cannot align lines).
 * Shadow blur has no drawtext equivalent and is not applied.
 */
export function drawText(
  g: GraphBuilder,
  base: string,
  clip: TextClip,
  fontFile: string,
  textFile: (line: number) => string,
): string {
  const lines = textLines(clip);
  const margin = clip.background?.padding ?? 0;
  const fade = alpha(clip);
  const slide = slideOffsets(clip, clip.startTime + clip.duration, "w", "h");
  // A slide's offset is added to the line's place; without one, the place is written as 1.0 did.
  const moved = (place: string, offset: string) => (offset ? `'${place}${offset}'` : place);
  const filters = lines.map((_, i) =>
    [
      "drawtext=expansion=none",
      `fontfile='${fontFile}'`,
      `textfile='${textFile(i)}'`,
      `fontsize=${clip.fontSize}`,
      `fontcolor=${ffColour(clip.fontColor)}`,
      `x=${moved(lineX(clip, margin), slide.x)}`,
      `y=${moved(lineY(clip, margin, i, lines.length), slide.y)}`,
      ...(clip.background
        ? [
            "box=1",
            `boxcolor=${ffColour(clip.background.color, clip.background.opacity)}`,
            `boxborderw=${clip.background.padding}`,
          ]
        : []),
      ...(clip.outline ? [`borderw=${clip.outline.width}`, `bordercolor=${ffColour(clip.outline.color)}`] : []),
      ...(clip.shadow
        ? [
            `shadowx=${clip.shadow.offsetX}`,
            `shadowy=${clip.shadow.offsetY}`,
            `shadowcolor=${ffColour(clip.shadow.color)}`,
          ]
        : []),
      ...(fade ? [`alpha='${fade}'`] : []),
      `enable='between(t,${ffSeconds(clip.startTime)},${ffSeconds(clip.startTime + clip.duration)})'`,
    ].join(":"),
  );
  return g.chain(base, filters, "v");
}
