/**
 * bench:edl's 1.1 timeline: 5 clips of 10 s joined by 4 one-second crossfades (46 s), a sepia
 * filter on the middle clip and a caption track of 23 cues, at 1280x720@30. Our one graph against
 * the naive pipeline of intermediate files: each clip rendered to a file (its filter applied),
 * the crossfades made pairwise (xfade and acrossfade, each pass re-encoding what it joins), then
 * a last pass drawing the captions. Both run their graphs in one thread, as bench:edl's 1.0 part.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CaptionClip, VideoClip } from "../domain/edl/validated-edl";
import { validateEdl } from "../domain/edl/validate";
import { captionTexts } from "../encoder/timeline/captions";
import { compileTimeline, fontKey, type TimelineAssets } from "../encoder/timeline/compile";
import { resolveFont } from "../encoder/timeline/fonts";
import { GraphBuilder } from "../encoder/timeline/graph";
import { encodeArgs } from "../encoder/timeline/output-args";
import { buildVideoTrack } from "../encoder/timeline/video-track";
import { timeFfmpeg } from "./ffmpeg-time";
import { drawTextClip, encodePass, GRAPH_THREADS, NAIVE_HEAD, passFile, timeGraph } from "./naive-pass";

const CLIP_SECONDS = 10;
const FADE = 1;

/** Renders the 1.1 timeline both ways from `a.mp4` and `b.mp4` in `dir` (already in `assets`); its seconds each way. */
export async function bench11(dir: string, assets: TimelineAssets, url: (name: string) => string) {
  const clips = Array.from({ length: 5 }, (_, i) => ({
    id: `x${i}`,
    src: url(i % 2 ? "b.mp4" : "a.mp4"),
    in: i * 3,
    out: i * 3 + CLIP_SECONDS,
    startTime: i * (CLIP_SECONDS - FADE),
    ...(i > 0 ? { transition: { in: { type: "crossfade", duration: FADE } } } : {}),
    ...(i === 2 ? { filters: ["sepia"] } : {}),
  }));
  const length = 5 * CLIP_SECONDS - 4 * FADE;
  const cues = Array.from({ length: Math.floor(length / 2) }, (_, k) => ({
    start: 2 * k,
    end: 2 * k + 1.5,
    text: `Caption ${k + 1}\nsecond line`,
  }));
  const validation = validateEdl(
    {
      version: "1.1",
      output: { resolution: "1280x720", fps: 30 },
      timeline: {
        tracks: [
          { type: "video", clips },
          { type: "caption", clips: [{ id: "subs", cues, fontSize: 40 }] },
        ],
      },
    },
    "enterprise",
  );
  if (!validation.edl) throw new Error(validation.errors.join("; "));
  const edl = validation.edl;
  const captions = edl.timeline.tracks.find((t) => t.type === "caption")!.clips[0] as CaptionClip;
  assets.fonts.set(fontKey(captions), await resolveFont(captions.fontFamily, captions.fontWeight));

  const compiled = compileTimeline(edl, assets, { workDir: dir, output: join(dir, "one-graph-1-1.mp4") });
  await Promise.all(compiled.files.map((f) => writeFile(f.path, f.content)));
  const oneGraph = await timeFfmpeg(compiled.args);

  const media = (u: string) => assets.media.get(u)!;
  const encode = [...encodeArgs(edl.output)];
  let naive = 0;
  // Each clip alone, its filter applied, no transition.
  const videoClips = edl.timeline.tracks.find((t) => t.type === "video")!.clips as VideoClip[];
  const segments: string[] = [];
  for (const [i, clip] of videoClips.entries()) {
    const g = new GraphBuilder();
    const alone = { ...clip, startTime: 0, transition: undefined };
    const { video, audio } = buildVideoTrack(g, [alone], media, compiled.frame, compiled.fps, CLIP_SECONDS);
    const out = join(dir, `x-seg${i}.mp4`);
    naive += await timeGraph(g, [video, audio], encode, out);
    segments.push(out);
  }
  // The crossfades pairwise: what is joined so far, with the next clip.
  let joined = segments[0];
  let joinedSeconds = CLIP_SECONDS;
  for (const [i, next] of segments.slice(1).entries()) {
    const out = join(dir, `x-joined${i + 1}.mp4`);
    naive += await timeFfmpeg([
      ...NAIVE_HEAD,
      "-i",
      joined,
      "-i",
      next,
      ...GRAPH_THREADS,
      "-filter_complex",
      `[0:v]settb=AVTB[a];[1:v]settb=AVTB[b];[a][b]xfade=transition=fade:duration=${FADE}:offset=${joinedSeconds - FADE}[v];` +
        `[0:a][1:a]acrossfade=d=${FADE}[s]`,
      "-map",
      "[v]",
      "-map",
      "[s]",
      ...encode,
      out,
    ]);
    joined = out;
    joinedSeconds += CLIP_SECONDS - FADE;
  }
  // The captions drawn in a last pass.
  const g = new GraphBuilder();
  g.input({ path: joined });
  let picture = "[0:v]";
  const writes: Promise<void>[] = [];
  captionTexts(captions, captions.cues ?? [], compiled.duration).forEach((cue, k) => {
    picture = drawTextClip(g, picture, cue, assets, passFile(dir, `x-cue-${k}`), writes);
  });
  naive += await encodePass(g, picture, writes, encode, join(dir, "naive-1-1.mp4"));

  console.log(
    `\nTimeline 1.1 benchmark: ${compiled.duration} s, 5 clips, 4 crossfades, a sepia filter, ${cues.length} caption cues, ${compiled.frame.width}x${compiled.frame.height}@${compiled.fps}\n`,
  );
  console.log("| pipeline | seconds | realtime factor |");
  console.log(`| one graph | ${oneGraph.toFixed(2)} | ${(compiled.duration / oneGraph).toFixed(2)}× |`);
  console.log(
    `| naive (5 intermediates + 4 pairwise crossfades + a caption pass) | ${naive.toFixed(2)} | ${(compiled.duration / naive).toFixed(2)}× |`,
  );
  console.log(`| ratio one graph / naive | ${(oneGraph / naive).toFixed(2)} (target ≤ 0.6) | |`);
  return { seconds: compiled.duration, oneGraph, naive, ratio: oneGraph / naive };
}
