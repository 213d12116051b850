import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { LadderRecipe } from "../../domain/presets/recipes";
import type { SplitPlan } from "../../domain/split";
import { streamRecipe } from "../../domain/stream/layout";
import { audioStreamCommand, partStreamCommand } from "../../encoder/ffmpeg/args/stream";
import { probeSource } from "../../encoder/ffmpeg/probe";
import { runFfmpeg } from "../../encoder/ffmpeg/run";
import { type PublishedSegment, publishStream } from "../../encoder/stream/publisher";
import { streamSplitPlan } from "../../encoder/stream/split-plan";
import { firstPresentation, layoutFor, packageStream } from "../../encoder/stream/whole";

/**
 * A streaming preset's split made on this machine, as the pool makes it
 * (docs/playback.md#how-a-stream-is-made): the encoder's own plan, every part's FFmpeg run (the
 * part's command, reading a local copy of the source) and the audio's, each published into one
 * stream folder as the encoder's publisher publishes (decode times placed, nothing stored), then
 * packaged as the ZIP packages it. The distributed path (the Worker, QStash, several encoders,
 * storage, byte ranges) is test/e2e/playback.test.ts's.
 */
export async function streamLocally(
  source: string,
  presetId: string,
  outDir: string,
  partSeconds: number,
): Promise<{ plan: SplitPlan; recipe: LadderRecipe }> {
  const recipe = streamRecipe(presetId);
  if (!recipe) throw new Error(`${presetId} is not a streaming preset`);
  const probed = await probeSource(source);
  const layout = layoutFor(recipe, probed);
  if (!layout) throw new Error(`${source} has no video`);
  const plan = streamSplitPlan(recipe, probed, layout, partSeconds);
  const stream = plan.stream;
  if (!stream) throw new Error("a stream's plan without its stream");
  const segments = new Map<string, PublishedSegment[]>();
  const clock = { videoStart: stream.videoStart, audioStart: stream.audioStart };
  const rate = plan.fps.num / plan.fps.den;
  const tasks = [...plan.parts, ...(plan.audio ? [null] : [])];
  await Promise.all(
    tasks.map(async (part) => {
      const dir = join(outDir, `task-${part ? part.index : "audio"}`);
      await mkdir(dir, { recursive: true });
      const renditions = layout.renditions.filter((r) => (part ? r.kind === "video" : r.kind === "audio"));
      const first = part ? stream.segments[part.index].first : 0;
      const from = part ? Math.ceil(part.from * rate - 0.5) / rate : 0;
      const publisher = publishStream(
        {
          dir,
          renditions,
          segmentType: layout.segmentType,
          keyPrefix: "",
          startNumber: first,
          firstPresentation: firstPresentation(layout, clock, from),
          store: async () => undefined,
          report: async () => undefined,
          intervalMs: 50,
        },
        () => undefined,
      );
      const command = part
        ? partStreamCommand(
            recipe,
            {
              source: { path: source },
              video: { index: stream.videoIndex, height: plan.height, fps: rate, start: stream.videoStart },
              from: part.from,
              ...(part.index === plan.parts.length - 1 ? {} : { to: part.to }),
              firstSegment: first,
            },
            dir,
          )
        : audioStreamCommand(
            recipe,
            {
              source: { path: source },
              audioIndex: stream.audioIndex ?? 0,
              videoStart: stream.videoStart,
              sourceHeight: plan.height,
            },
            dir,
          );
      try {
        await runFfmpeg(command.args);
        await publisher.flush();
      } finally {
        publisher.stop();
      }
      for (const [name, list] of publisher.segments()) segments.set(name, [...(segments.get(name) ?? []), ...list]);
      // Every task's files into the one stream, as the pool's stores put them under one prefix.
      for (const rendition of renditions) await mkdir(join(outDir, rendition.name), { recursive: true });
      await moveInto(
        dir,
        outDir,
        renditions.map((r) => r.name),
        first === 0,
      );
      await rm(dir, { recursive: true, force: true });
    }),
  );
  for (const [name, list] of segments)
    segments.set(
      name,
      list.sort((a, b) => a.index - b.index),
    );
  const inits = new Map(layout.renditions.map((r) => [r.name, join(outDir, r.name, "init.mp4")]));
  await packageStream(outDir, layout, segments, inits, new Date());
  return { plan, recipe };
}

/** A task's segments moved into the stream's folders; its init segment too when it made segment 0. */
async function moveInto(from: string, to: string, renditions: string[], ownsInit: boolean) {
  for (const rendition of renditions) {
    for (const file of await readdir(join(from, rendition))) {
      if (/^seg_\d+\.(ts|m4s)$/.test(file)) await rename(join(from, rendition, file), join(to, rendition, file));
      else if (ownsInit && /^init(_\d+)?\.mp4$/.test(file))
        await rename(join(from, rendition, file), join(to, rendition, "init.mp4"));
    }
  }
}
