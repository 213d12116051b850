/**
 * The naive pipelines' last pass (bench:edl, 1.0 and 1.1): text drawn over the joined file in one
 * graph, as separate tools would, then encoded; and the runs of a graph both parts time.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type TextClip, textLines } from "../domain/edl/validated-edl";
import { inputArgs } from "../encoder/ffmpeg/args/command";
import { fontKey, type TimelineAssets } from "../encoder/timeline/compile";
import type { GraphBuilder } from "../encoder/timeline/graph";
import { drawText } from "../encoder/timeline/text";
import { timeFfmpeg } from "./ffmpeg-time";

export const NAIVE_HEAD = ["-hide_banner", "-nostdin", "-y", "-loglevel", "error"];
/**
 * The same thread settings as the one-graph run (compileTimeline's args), so the comparison
 * measures one graph against intermediates, not a difference in filter-graph threading.
 */
export const GRAPH_THREADS = ["-filter_complex_threads", "1"];

/** Draws a text clip (or a caption cue as one) on `picture`, its lines written to files named by `name`. */
export function drawTextClip(
  g: GraphBuilder,
  picture: string,
  clip: Parameters<typeof drawText>[2] & Pick<TextClip, "text">,
  assets: TimelineAssets,
  file: (line: number) => string,
  writes: Promise<void>[],
): string {
  textLines(clip).forEach((content, line) => {
    writes.push(writeFile(file(line), content));
  });
  return drawText(g, picture, clip, assets.fonts.get(fontKey(clip))!, file);
}

/** One FFmpeg run of graph `g`, its `maps` encoded by `encode` into `out`: its seconds. */
export function timeGraph(g: GraphBuilder, maps: string[], encode: string[], out: string): Promise<number> {
  return timeFfmpeg([
    ...NAIVE_HEAD,
    ...g.inputs().flatMap(inputArgs),
    ...GRAPH_THREADS,
    "-filter_complex",
    g.filterGraph(),
    ...maps.flatMap((label) => ["-map", label]),
    ...encode,
    out,
  ]);
}

/** The pass itself: the graph over `picture`, the joined file's audio copied through the encode; its seconds. */
export async function encodePass(
  g: GraphBuilder,
  picture: string,
  writes: Promise<void>[],
  encode: string[],
  out: string,
): Promise<number> {
  await Promise.all(writes);
  return timeGraph(g, [picture, "0:a"], encode, out);
}

export const passFile = (dir: string, name: string) => (line: number) => join(dir, `${name}-${line}.txt`);
