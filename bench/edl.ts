/**
 * npm run bench:edl — a 60 s, 6-clip timeline with two overlays (one normal with fades, one
 * multiply) and two text items, rendered as ONE graph (our compiler) against the naive pipeline
 * measured in the same run: each clip encoded to an intermediate file, the concat demuxer, then
 * a second encode for overlays and text (the same filters). Prints both times, the ratio
 * (target ≤ 0.6) and the one-graph realtime factor. Then the same for a 1.1 timeline (bench/edl-1-1.ts).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { OverlayClip, TextClip, VideoClip } from "../domain/edl/validated-edl";
import { validateEdl } from "../domain/edl/validate";
import { probeFile } from "../encoder/ffmpeg/probe";
import { compileTimeline, fontKey, type TimelineAssets } from "../encoder/timeline/compile";
import { resolveFont } from "../encoder/timeline/fonts";
import { GraphBuilder } from "../encoder/timeline/graph";
import { encodeArgs } from "../encoder/timeline/output-args";
import { drawOverlay } from "../encoder/timeline/overlays";
import { buildVideoTrack } from "../encoder/timeline/video-track";
import { ffmpeg } from "../test/support/media";
import { bench11 } from "./edl-1-1";
import { drawTextClip, encodePass, NAIVE_HEAD, passFile, timeGraph } from "./naive-pass";
import { timeFfmpeg } from "./ffmpeg-time";
import { recordRun } from "./results";

const dir = await mkdtemp(join(tmpdir(), "bench-edl-"));
try {
  console.log("Generating sources…");
  await Promise.all([
    ffmpeg([
      "-f",
      "lavfi",
      "-i",
      "testsrc2=size=1920x1080:rate=30:duration=40",
      "-f",
      "lavfi",
      "-i",
      "sine=frequency=440:duration=40",
      "-ac",
      "2",
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-c:a",
      "aac",
      join(dir, "a.mp4"),
    ]),
    ffmpeg([
      "-f",
      "lavfi",
      "-i",
      "testsrc=size=1280x720:rate=30:duration=40",
      "-f",
      "lavfi",
      "-i",
      "sine=frequency=660:duration=40",
      "-ac",
      "2",
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-c:a",
      "aac",
      join(dir, "b.mp4"),
    ]),
    ffmpeg(["-f", "lavfi", "-i", "color=c=orange:size=240x120", "-frames:v", "1", join(dir, "logo.png")]),
  ]);
  const url = (name: string) => `https://bench.local/${name}`;
  const clips = Array.from({ length: 6 }, (_, i) => ({
    id: `c${i}`,
    src: url(i % 2 ? "b.mp4" : "a.mp4"),
    in: i * 3,
    out: i * 3 + (i === 2 ? 20 : 10),
    startTime: i * 10,
    ...(i === 2 ? { speed: 2 } : {}),
    ...(i === 4 ? { volume: 4 } : {}),
  }));
  const doc = {
    version: "1.0",
    output: { resolution: "1280x720", fps: 30 },
    timeline: {
      tracks: [
        { type: "video", clips },
        {
          type: "overlay",
          clips: [
            {
              id: "logo",
              src: url("logo.png"),
              startTime: 5,
              duration: 20,
              position: { x: "right", y: "top" },
              opacity: 0.8,
              fadeIn: 1,
              fadeOut: 1,
            },
            {
              id: "tint",
              src: url("logo.png"),
              startTime: 30,
              duration: 20,
              position: { x: 100, y: 400 },
              blendMode: "multiply",
            },
          ],
        },
        {
          type: "text",
          clips: [
            {
              id: "title",
              text: "One graph",
              startTime: 2,
              duration: 10,
              fontSize: 56,
              position: { x: "center", y: "bottom" },
              background: { color: "#000000", opacity: 0.5, padding: 12 },
              fadeIn: 0.5,
            },
            {
              id: "credit",
              text: "bench:edl",
              startTime: 40,
              duration: 15,
              fontSize: 36,
              position: { x: 40, y: 40 },
              textAlign: "left",
              outline: { color: "#000000", width: 3 },
            },
          ],
        },
      ],
    },
  };
  const validation = validateEdl(doc, "enterprise");
  if (!validation.edl) throw new Error(validation.errors.join("; "));
  const edl = validation.edl;

  const assets: TimelineAssets = { media: new Map(), images: new Map(), fonts: new Map() };
  for (const name of ["a.mp4", "b.mp4"]) {
    const probe = await probeFile(join(dir, name));
    assets.media.set(url(name), {
      path: join(dir, name),
      hasVideo: true,
      hasAudio: true,
      width: probe.video!.width,
      height: probe.video!.height,
      fps: probe.video!.fps,
    });
  }
  assets.images.set(url("logo.png"), { path: join(dir, "logo.png"), width: 240, height: 120 });
  const texts = edl.timeline.tracks.flatMap((t) => (t.type === "text" ? t.clips : [])) as TextClip[];
  for (const t of texts) assets.fonts.set(fontKey(t), await resolveFont(t.fontFamily, t.fontWeight));

  // One graph.
  const compiled = compileTimeline(edl, assets, { workDir: dir, output: join(dir, "one-graph.mp4") });
  await Promise.all(compiled.files.map((f) => writeFile(f.path, f.content)));
  const oneGraph = await timeFfmpeg(compiled.args);

  // Naive: every clip to an intermediate file, the concat demuxer, a second pass for overlays and text.
  const media = (u: string) => assets.media.get(u)!;
  let naive = 0;
  const segments: string[] = [];
  const videoClips = edl.timeline.tracks.find((t) => t.type === "video")!.clips as VideoClip[];
  for (const [i, clip] of videoClips.entries()) {
    const g = new GraphBuilder();
    const d = (clip.out - clip.in) / clip.speed;
    const { video, audio } = buildVideoTrack(g, [{ ...clip, startTime: 0 }], media, compiled.frame, compiled.fps, d);
    const out = join(dir, `seg${i}.mp4`);
    naive += await timeGraph(g, [video, audio], encodeArgs(edl.output), out);
    segments.push(`file '${out}'`);
  }
  await writeFile(join(dir, "list.txt"), segments.join("\n"));
  naive += await timeFfmpeg([
    ...NAIVE_HEAD,
    "-f",
    "concat",
    "-safe",
    "0",
    "-i",
    join(dir, "list.txt"),
    "-c",
    "copy",
    join(dir, "joined.mp4"),
  ]);
  const g = new GraphBuilder();
  g.input({ path: join(dir, "joined.mp4") });
  let picture = "[0:v]";
  const writes: Promise<void>[] = [];
  edl.timeline.tracks.forEach((track, t) => {
    if (track.type === "overlay")
      for (const clip of track.clips as OverlayClip[])
        picture = drawOverlay(
          g,
          picture,
          clip,
          assets.images.get(clip.src)!,
          compiled.frame,
          compiled.fps,
          compiled.duration,
        );
    if (track.type === "text") {
      (track.clips as TextClip[]).forEach((clip, c) => {
        picture = drawTextClip(g, picture, clip, assets, passFile(dir, `text-${t}-${c}`), writes);
      });
    }
  });
  naive += await encodePass(g, picture, writes, encodeArgs(edl.output), join(dir, "naive.mp4"));

  console.log(
    `\nTimeline benchmark: ${compiled.duration} s, 6 clips, 2 overlays, 2 text items, ${compiled.frame.width}x${compiled.frame.height}@${compiled.fps}\n`,
  );
  console.log("| pipeline | seconds | realtime factor |");
  console.log(`| one graph | ${oneGraph.toFixed(2)} | ${(compiled.duration / oneGraph).toFixed(2)}× |`);
  console.log(
    `| naive (6 intermediates + concat + second pass) | ${naive.toFixed(2)} | ${(compiled.duration / naive).toFixed(2)}× |`,
  );
  console.log(`| ratio one graph / naive | ${(oneGraph / naive).toFixed(2)} (target ≤ 0.6) | |`);

  const v11 = await bench11(dir, assets, url);
  recordRun("edl", {}, { "1.0": { seconds: compiled.duration, oneGraph, naive, ratio: oneGraph / naive }, "1.1": v11 });
} finally {
  await rm(dir, { recursive: true, force: true });
}
