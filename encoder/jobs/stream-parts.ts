/**
 * A long stream in parts over the pool (docs/playback.md#how-a-stream-is-made): the claiming
 * encoder only plans and hands the plan over; each part reads its own span of the source by
 * ranges and writes its segments straight into the stream; the audio's task writes the audio
 * rendition; the job's last task packages the stream as its ZIP. No piece of the source is cut
 * or stored, and nothing is joined.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FINAL_STATUSES } from "../../domain/jobs";
import type { LadderRecipe } from "../../domain/presets/recipes";
import { partOutputKey, type SplitPlan, type StreamSplit } from "../../domain/split";
import { INIT_SEGMENT, segmentName, streamPrefix, streamRecipe } from "../../domain/stream/layout";
import { JobFailure } from "../failure";
import { audioStreamCommand, partStreamCommand } from "../ffmpeg/args/stream";
import { collectOutput } from "../ffmpeg/outputs";
import { renice } from "../ffmpeg/priority";
import { runFfmpeg } from "../ffmpeg/run";
import { semaphore } from "../concurrency";
import { type ClaimedJob, type ClaimedJoin, type ClaimedPart, JobGoneError } from "../internal-api";
import { openRanged, serveRanges } from "../source/ranged";
import type { DownloadPolicy } from "../source/download";
import { type PublishedSegment, publishStream } from "../stream/publisher";
import { firstPresentation, packageStream } from "../stream/whole";
import { handOverPlan } from "./hand-over";
import type { HandedOff, RenderContext, RenderResult } from "./pipeline";
import type { StreamDeps } from "./stream-job";

/**
 * A task's niceness: the first part and the audio (the stream's start) at the encoder's own, the
 * next part a little below, the rest lowest, so that where tasks share cores the start comes first.
 */
const taskNiceness = (part: number | null) => (part === null || part === 0 ? 0 : part === 1 ? 5 : 10);
/** The audio's, once its first segment is stored: the rest of it no longer holds the start back. */
const AUDIO_NICENESS_AFTER_START = 10;

/** Segments moved between storage and this disk at once by the task that packages the stream. */
const TRANSFERS_AT_ONCE = 8;

/** What a task records as its output: the segments it made, by rendition, for the task that packages the stream. */
type PartRecord = Record<string, PublishedSegment[]>;

function streamOf(plan: SplitPlan, presetId: string): { recipe: LadderRecipe; stream: StreamSplit } {
  const recipe = streamRecipe(presetId);
  if (!recipe || !plan.stream) throw JobFailure.internal(new Error(`preset ${presetId} has no stream split`));
  return { recipe, stream: plan.stream };
}

/**
 * Hands the plan over (encoder/jobs/hand-over.ts), this encoder keeping the two tasks the
 * stream's start waits for: the first part and the audio.
 */
export async function handOffStream(
  deps: StreamDeps,
  job: ClaimedJob,
  ctx: RenderContext,
  plan: SplitPlan,
  duration: number,
): Promise<HandedOff> {
  if (!plan.stream) throw JobFailure.internal(new Error("a stream's split without its stream"));
  await deps.api.stream(job.id, { claim: job.claim, layout: plan.stream.layout, segments: [] });
  return handOverPlan(deps.api, job, ctx, plan, [0, ...(plan.audio ? [plan.parts.length] : [])], duration);
}

/** When the first frame at or after `from` (seconds from the first frame) falls, on a constant rate. */
function firstFrameAt(plan: SplitPlan, from: number): number {
  const rate = plan.fps.num / plan.fps.den;
  return Math.ceil(from * rate - 0.5) / rate;
}

/**
 * One task: a part's every rung over its span, or (no part) the audio rendition over the whole
 * source, each read from the origin by ranges, its segments stored and reported as they close.
 * Resolves with its record, the task's output.
 */
export async function renderStreamPart(
  deps: StreamDeps,
  claimed: ClaimedPart,
  ctx: RenderContext,
  policy: DownloadPolicy,
): Promise<{ path: string }> {
  const { plan, part } = claimed;
  const { recipe, stream } = streamOf(plan, claimed.preset);
  const { layout } = stream;
  const remote = await openRanged(claimed.inputUrl, policy, ctx.signal);
  if (!remote) throw JobFailure.download("the source no longer answers byte ranges");
  const proxy = await serveRanges(remote, policy, ctx.signal);
  const outDir = join(ctx.workDir, "stream");
  await mkdir(outDir, { recursive: true });
  const halt = new AbortController();
  const signal = AbortSignal.any([ctx.signal, halt.signal]);
  const renditions = layout.renditions.filter((r) => (part ? r.kind === "video" : r.kind === "audio"));
  const segments = part ? stream.segments[part.index] : { first: 0, count: 0 };
  const last = part !== null && part.index === plan.parts.length - 1;
  const from = part ? part.from : 0;
  const opening = await deps.api.stream(claimed.jobId, {
    claim: claimed.claim,
    part: claimed.part ? claimed.part.index : plan.parts.length,
    listed: true,
    segments: [],
  });
  const stored: string[] = [];
  let ffmpegPid: number | undefined;
  let audioStarted = false;
  const publisher = publishStream(
    {
      dir: outDir,
      renditions,
      segmentType: layout.segmentType,
      keyPrefix: streamPrefix(claimed.accountId, claimed.jobId),
      startNumber: segments.first,
      listed: opening.listed,
      dropStored: true,
      firstPresentation: firstPresentation(
        layout,
        { videoStart: stream.videoStart, audioStart: stream.audioStart },
        firstFrameAt(plan, from),
      ),
      store: async (key, path, type) => {
        stored.push(key);
        await deps.uploader.storeFile(key, path, type, signal);
      },
      report: async (reported) => {
        const answer = await deps.api.stream(claimed.jobId, {
          claim: claimed.claim,
          part: part ? part.index : plan.parts.length,
          segments: reported,
        });
        if (answer.playable) ctx.log({ stage: "playable" });
        if (!part && !audioStarted && reported.length > 0 && ffmpegPid !== undefined) {
          audioStarted = true;
          await renice(ffmpegPid, AUDIO_NICENESS_AFTER_START).catch((err: Error) =>
            ctx.log({ stage: "error", message: `the audio's niceness could not be raised: ${err.message}` }),
          );
        }
      },
    },
    (err) => halt.abort(err),
  );
  const source = { path: proxy.url, ranged: true } as const;
  const command = part
    ? partStreamCommand(
        recipe,
        {
          source,
          video: {
            index: stream.videoIndex,
            height: plan.height,
            fps: plan.fps.num / plan.fps.den,
            start: stream.videoStart,
          },
          from: part.from,
          ...(last ? {} : { to: part.to }),
          firstSegment: segments.first,
        },
        outDir,
      )
    : audioStreamCommand(
        recipe,
        { source, audioIndex: stream.audioIndex ?? 0, videoStart: stream.videoStart, sourceHeight: plan.height },
        outDir,
      );
  const started = performance.now();
  try {
    await runFfmpeg(command.args, {
      signal,
      workDir: ctx.workDir,
      watchdog: deps.watchdog,
      durationSeconds: part ? part.to - part.from : (plan.totalFrames * plan.fps.den) / plan.fps.num,
      onProgress: ctx.onProgress,
      log: ctx.log,
      niceness: taskNiceness(part ? part.index : null),
      onSpawn: (pid) => {
        ffmpegPid = pid;
      },
    }).catch((err) => {
      throw halt.signal.aborted ? halt.signal.reason : err;
    });
    await publisher.flush();
  } catch (err) {
    if (err instanceof JobGoneError && FINAL_STATUSES.includes(err.status) && err.status !== "completed")
      await Promise.allSettled(stored.map((key) => deps.uploader.deleteObject(key)));
    throw err;
  } finally {
    publisher.stop();
    ctx.log({ stage: "download", bytes: proxy.bytesServed(), seconds: (performance.now() - started) / 1000 });
    await proxy.close();
  }
  const record = join(ctx.workDir, "segments.json");
  await writeFile(record, JSON.stringify(Object.fromEntries(publisher.segments()) satisfies PartRecord));
  return { path: record };
}

/**
 * The job's last task: every segment the parts and the audio's task stored, brought to this disk
 * with their init segments and packaged, with the VOD playlists, as the job's ZIP.
 */
export async function renderStreamFinish(
  deps: StreamDeps,
  claimed: ClaimedJoin,
  ctx: RenderContext,
): Promise<RenderResult> {
  const { job, plan } = claimed;
  const { stream } = streamOf(plan, job.preset);
  const duration = (plan.totalFrames * plan.fps.den) / plan.fps.num;
  ctx.onDuration(duration);
  const byIndex = new Map(claimed.parts.map((p) => [p.index, p.outputKey]));
  const records = await Promise.all(
    [...plan.parts.map((p) => p.index), ...(plan.audio ? [plan.parts.length] : [])].map(async (index) => {
      const key = byIndex.get(index) ?? partOutputKey(job.id, index);
      const path = join(ctx.workDir, `record-${index}.json`);
      await deps.uploader.downloadFile(key, path, ctx.signal);
      return JSON.parse(await readFile(path, "utf8")) as PartRecord;
    }),
  );
  const segments = new Map<string, PublishedSegment[]>();
  for (const record of records)
    for (const [rendition, list] of Object.entries(record))
      segments.set(
        rendition,
        [...(segments.get(rendition) ?? []), ...list].sort((a, b) => a.index - b.index),
      );
  const outDir = join(ctx.workDir, "stream");
  const prefix = streamPrefix(job.accountId, job.id);
  const few = semaphore(TRANSFERS_AT_ONCE);
  const files = stream.layout.renditions.flatMap((r) => [
    ...(stream.layout.segmentType === "fmp4" ? [`${r.name}/${INIT_SEGMENT}`] : []),
    ...(segments.get(r.name) ?? []).map((s) => `${r.name}/${segmentName(s.index, stream.layout.segmentType)}`),
  ]);
  const started = performance.now();
  await Promise.all(stream.layout.renditions.map((r) => mkdir(join(outDir, r.name), { recursive: true })));
  const sizes = await Promise.all(
    files.map((file) => few(() => deps.uploader.downloadFile(`${prefix}${file}`, join(outDir, file), ctx.signal))),
  );
  ctx.log({
    stage: "download",
    bytes: sizes.reduce((a, b) => a + b, 0),
    seconds: (performance.now() - started) / 1000,
  });
  const inits = new Map(stream.layout.renditions.map((r) => [r.name, join(outDir, r.name, INIT_SEGMENT)]));
  await packageStream(outDir, stream.layout, segments, inits, new Date());
  return { output: await collectOutput(job.preset, outDir, { kind: "zip" }), duration };
}
