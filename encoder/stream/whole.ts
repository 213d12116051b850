/**
 * A stream made by one FFmpeg run from a source on this disk (docs/playback.md#how-a-stream-is-made):
 * its segments published as FFmpeg closes them (stored and reported, or kept here alone), then
 * packaged as the ZIP carries them, with the VOD playlists the Worker serves once the job is done.
 */
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { HLS_MASTER_PLAYLIST, type LadderRecipe } from "../../domain/presets/recipes";
import { mpd } from "../../domain/stream/dash";
import { masterPlaylist, mediaPlaylist } from "../../domain/stream/hls";
import {
  DASH_MANIFEST,
  INIT_SEGMENT,
  MEDIA_OFFSET_SECONDS,
  MEDIA_PLAYLIST,
  type StreamLayout,
  streamLayout,
} from "../../domain/stream/layout";
import type { FfmpegInput } from "../ffmpeg/args/command";
import { wholeStreamCommand } from "../ffmpeg/args/stream";
import type { ProbedSource } from "../ffmpeg/probe";
import { type FfmpegRunOptions, runFfmpeg } from "../ffmpeg/run";
import { type PublishedSegment, type PublisherOptions, publishStream } from "./publisher";

/** Samples FFmpeg's AAC encoder puts before the first input sample (its priming), at 48 kHz. */
const AAC_PRIMING_SECONDS = 1024 / 48_000;

/** Where the source's video and audio start on its own clock (its streams' start times). */
export function sourceClock({ probe, clocks }: ProbedSource): { videoStart: number; audioStart: number | null } {
  const startOf = (index: number | undefined) => {
    const start = Number(clocks.find((c) => c.index === index)?.startTime);
    return Number.isFinite(start) ? start : 0;
  };
  return { videoStart: startOf(probe.video?.index), audioStart: probe.audio[0] ? startOf(probe.audio[0].index) : null };
}

/**
 * Where each rendition's first sample is presented on the stream's clock: the video's first
 * frame at MEDIA_OFFSET_SECONDS plus `from` (a part's), the audio where it starts against the
 * video, its encoder's priming before it.
 */
export function firstPresentation(layout: StreamLayout, clock: ReturnType<typeof sourceClock>, from = 0) {
  return Object.fromEntries(
    layout.renditions.map((r) => [
      r.name,
      r.kind === "video"
        ? MEDIA_OFFSET_SECONDS + from
        : MEDIA_OFFSET_SECONDS + (clock.audioStart ?? clock.videoStart) - clock.videoStart - AAC_PRIMING_SECONDS,
    ]),
  );
}

/** The layout of a ladder's stream for this source. */
export function layoutFor(recipe: LadderRecipe, { probe, clocks }: ProbedSource): StreamLayout | null {
  const video = probe.video;
  if (!video) return null;
  const rate = clocks.find((c) => c.index === video.index)?.frameRate;
  const frameRate = rate && /^\d+\/\d+$/.test(rate) && !rate.startsWith("0/") ? rate : `${video.fps ?? 30}/1`;
  return streamLayout(recipe, {
    width: video.width,
    height: video.height,
    frameRate,
    hasAudio: probe.audio.length > 0,
  });
}

/**
 * The stream's files as the ZIP carries them: FFmpeg's own playlists replaced by the VOD ones the
 * Worker serves once the job is done, each init segment under its stream name, nothing half written.
 */
export async function packageStream(
  dir: string,
  layout: StreamLayout,
  segments: ReadonlyMap<string, PublishedSegment[]>,
  inits: ReadonlyMap<string, string>,
  startedAt: Date,
) {
  const codecs = new Map(
    [...segments].flatMap(([name, list]) => (list[0]?.codecs ? [[name, list[0].codecs] as const] : [])),
  );
  for (const rendition of layout.renditions) {
    const folder = join(dir, rendition.name);
    const list = segments.get(rendition.name) ?? [];
    const init = inits.get(rendition.name);
    if (init && init !== join(folder, INIT_SEGMENT)) await rename(init, join(folder, INIT_SEGMENT));
    for (const file of await readdir(folder)) if (file.endsWith(".tmp")) await rm(join(folder, file));
    if (layout.manifest === "dash") await rm(join(folder, MEDIA_PLAYLIST), { force: true });
    else {
      const durations = list.map((s) => s.duration);
      await writeFile(join(folder, MEDIA_PLAYLIST), mediaPlaylist(layout, durations, { ended: true, startedAt }));
    }
  }
  if (layout.manifest !== "dash") await writeFile(join(dir, HLS_MASTER_PLAYLIST), masterPlaylist(layout, codecs));
  if (layout.manifest !== "hls") {
    const runs = new Map(
      [...segments].map(([name, list]) => [
        name,
        { codecs: list[0]?.codecs ?? "", start: list[0]?.start, durations: list.map((s) => s.duration) },
      ]),
    );
    await writeFile(join(dir, DASH_MANIFEST), mpd(layout, runs, { ended: true, startedAt, now: startedAt }));
  }
}

export interface WholeStreamOptions {
  presetId: string;
  recipe: LadderRecipe;
  source: { input: FfmpegInput; probed: ProbedSource };
  layout: StreamLayout;
  /** Empty directory for the stream's files: a folder per rendition, then the playlists. */
  outDir: string;
  /** Where each segment goes as FFmpeg closes it (storage, for a job), and who is told. */
  publish: Pick<PublisherOptions, "keyPrefix" | "listed" | "store" | "report">;
  run: Pick<FfmpegRunOptions, "signal" | "workDir" | "watchdog" | "onProgress" | "log">;
  /** Told of the first failure to publish, when FFmpeg is to be stopped. */
  onPublishError(err: unknown): void;
}

/** Encodes, publishing as it goes, then packages the files in `outDir`. */
export async function encodeWholeStream(options: WholeStreamOptions): Promise<void> {
  const { recipe, source, layout, outDir } = options;
  const { probe } = source.probed;
  const clock = sourceClock(source.probed);
  const startedAt = new Date();
  await mkdir(outDir, { recursive: true });
  const publisher = publishStream(
    {
      ...options.publish,
      dir: outDir,
      renditions: layout.renditions,
      segmentType: layout.segmentType,
      startNumber: 0,
      firstPresentation: firstPresentation(layout, clock),
    },
    options.onPublishError,
  );
  try {
    const command = wholeStreamCommand(
      { presetId: options.presetId, input: source.input.path, outDir, probe },
      recipe,
      clock.videoStart,
      source.input,
    );
    await runFfmpeg(command.args, { ...options.run, durationSeconds: probe.duration });
    await publisher.flush();
  } finally {
    publisher.stop();
  }
  await packageStream(outDir, layout, publisher.segments(), publisher.inits(), startedAt);
}
