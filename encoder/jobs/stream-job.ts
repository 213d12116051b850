/**
 * A streaming preset's job (docs/playback.md#how-a-stream-is-made): every rendition's segments
 * stored as FFmpeg closes them, and reported, so the stream plays from its signed link while it
 * encodes; then the same files, with the VOD playlists the Worker serves at the end, as the ZIP.
 */
import { join } from "node:path";
import { FINAL_STATUSES } from "../../domain/jobs";
import type { LadderRecipe } from "../../domain/presets/recipes";
import { streamPrefix } from "../../domain/stream/layout";
import { collectOutput } from "../ffmpeg/outputs";
import type { ProbedSource } from "../ffmpeg/probe";
import type { Watchdog } from "../ffmpeg/watchdog";
import { type ClaimedJob, type InternalApi, JobGoneError } from "../internal-api";
import { JobFailure } from "../failure";
import type { FfmpegInput } from "../ffmpeg/args/command";
import { probeSource } from "../ffmpeg/probe";
import { downloadSource, type DownloadPolicy } from "../source/download";
import { openRanged, probeRanged, serveRanges } from "../source/ranged";
import { assertSelfContained } from "../source/self-contained";
import type { SplitSettings } from "../split/plan";
import { streamSplitPlan } from "../stream/split-plan";
import { encodeWholeStream, layoutFor } from "../stream/whole";
import { checkSource } from "./source-limits";
import { handOffStream } from "./stream-parts";
import type { Uploader } from "../upload/s3";
import type { HandedOff, RenderContext, RenderResult } from "./pipeline";

export interface StreamDeps {
  api: InternalApi;
  uploader: Uploader;
  watchdog?: Watchdog;
}

/** The source as FFmpeg reads it: a file on this disk, or the loopback proxy of a ranged source. */
type StreamSource = { input: FfmpegInput; probed: ProbedSource };

/**
 * A streaming preset's job. A source whose origin serves byte ranges is never downloaded first:
 * it is sniffed and probed by ranges through the encoder's proxy, then a long one is handed off
 * in parts that each read their own span, and a short one is encoded from it as it arrives. A
 * source without ranges (or in a container the ranged reader does not take) is downloaded, and
 * encoded whole here: its stream plays only once the download is done.
 */
export async function renderStreamJob(
  deps: StreamDeps & { settings: SplitSettings },
  job: ClaimedJob,
  ctx: RenderContext,
  policy: DownloadPolicy,
  recipe: LadderRecipe,
): Promise<RenderResult | HandedOff> {
  const probeOptions = { signal: ctx.signal, workDir: ctx.workDir, watchdog: deps.watchdog };
  const remote = await openRanged(job.inputUrl, policy, ctx.signal);
  if (remote) {
    const proxy = await serveRanges(remote, policy, ctx.signal);
    const started = performance.now();
    try {
      const ranged = await probeRanged(proxy, probeOptions);
      if (ranged) {
        const { input, probed } = ranged;
        checkSource(job, ctx, probed);
        const layout = layoutFor(recipe, probed);
        if (!layout)
          throw JobFailure.unsuitableSource(`The source has no video stream; preset ${job.preset} needs one.`);
        if (probed.probe.duration > (deps.settings.streamMinSeconds ?? deps.settings.minSeconds)) {
          const plan = streamSplitPlan(recipe, probed, layout, deps.settings.partSeconds);
          return await handOffStream(deps, job, ctx, plan, probed.probe.duration);
        }
        return await renderWholeStream(deps, job, ctx, { input, probed }, recipe);
      }
    } finally {
      ctx.log({ stage: "download", bytes: proxy.bytesServed(), seconds: (performance.now() - started) / 1000 });
      await proxy.close();
    }
  }
  const path = join(ctx.workDir, "source");
  const downloaded = await downloadSource(job.inputUrl, path, policy, ctx.signal);
  ctx.log({ stage: "download", bytes: downloaded.bytes, seconds: downloaded.seconds });
  await assertSelfContained(path);
  const probed = await probeSource(path, probeOptions);
  checkSource(job, ctx, probed);
  return renderWholeStream(deps, job, ctx, { input: { path }, probed }, recipe);
}

/**
 * A whole stream in one FFmpeg run: its segments stored and reported as they are closed, then
 * packaged as the job's ZIP.
 */
async function renderWholeStream(
  deps: StreamDeps,
  job: ClaimedJob,
  ctx: RenderContext,
  source: StreamSource,
  recipe: LadderRecipe,
): Promise<RenderResult> {
  const layout = layoutFor(recipe, source.probed);
  if (!layout) throw new Error("a stream without video");
  const opening = await deps.api.stream(job.id, { claim: job.claim, layout, listed: true, segments: [] });
  const outDir = join(ctx.workDir, "stream");
  const halt = new AbortController();
  const signal = AbortSignal.any([ctx.signal, halt.signal]);
  const stored: string[] = [];
  try {
    await encodeWholeStream({
      presetId: job.preset,
      recipe,
      source,
      layout,
      outDir,
      publish: {
        keyPrefix: streamPrefix(job.accountId, job.id),
        listed: opening.listed,
        store: async (key, path, type) => {
          stored.push(key);
          await deps.uploader.storeFile(key, path, type, signal);
        },
        report: async (segments) => {
          const answer = await deps.api.stream(job.id, { claim: job.claim, segments });
          if (answer.playable) ctx.log({ stage: "playable" });
        },
      },
      run: { signal, workDir: ctx.workDir, watchdog: deps.watchdog, onProgress: ctx.onProgress, log: ctx.log },
      onPublishError: (err) => halt.abort(err),
    });
  } catch (err) {
    const cause = halt.signal.aborted ? halt.signal.reason : err;
    // A job that ended meanwhile: what this run stored after the Worker deleted the stream is this run's to delete.
    if (cause instanceof JobGoneError && FINAL_STATUSES.includes(cause.status) && cause.status !== "completed")
      await Promise.allSettled(stored.map((key) => deps.uploader.deleteObject(key)));
    throw cause;
  }
  return {
    output: await collectOutput(job.preset, outDir, { kind: "zip" }),
    duration: source.probed.probe.duration,
  };
}
