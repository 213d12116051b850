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
import { encodeWholeStream, layoutFor } from "../stream/whole";
import type { Uploader } from "../upload/s3";
import type { RenderContext, RenderResult } from "./pipeline";

export interface StreamDeps {
  api: InternalApi;
  uploader: Uploader;
  watchdog?: Watchdog;
}

/**
 * A whole stream from the source on this disk, in one FFmpeg run: its segments stored and
 * reported as they are closed, then packaged as the job's ZIP.
 */
export async function renderWholeStream(
  deps: StreamDeps,
  job: ClaimedJob,
  ctx: RenderContext,
  source: { path: string; probed: ProbedSource },
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
          await deps.api.stream(job.id, { claim: job.claim, segments });
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
