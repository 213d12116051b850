import { join } from "node:path";
import { PLAN_DISPLAY_NAMES } from "../../domain/plans";
import { streamRecipe } from "../../domain/stream/layout";
import { JobFailure } from "../failure";
import { encodePreset } from "../ffmpeg/encode";
import { probeSource } from "../ffmpeg/probe";
import type { Watchdog } from "../ffmpeg/watchdog";
import type { ClaimedJob } from "../internal-api";
import { downloadSource, type DownloadPolicy } from "../source/download";
import { assertSelfContained } from "../source/self-contained";
import { readSplitFacts } from "../split/facts";
import { planSplit, splittableRecipe, type SplitSettings } from "../split/plan";
import type { HandedOff, RenderContext, RenderResult } from "./pipeline";
import { handOff, type SplitDeps } from "./split-jobs";
import { renderStreamJob } from "./stream-job";

/** How a long source is split, and what the split stage stores and tells through. */
export interface Splitting extends SplitDeps {
  settings: SplitSettings;
}

/**
 * A preset job: download the source, probe it, check the plan's duration limit, then encode it,
 * or hand it off in parts when it is long and its preset splits (docs/scaling.md).
 */
export async function renderPresetJob(
  job: ClaimedJob,
  ctx: RenderContext,
  policy: DownloadPolicy,
  splitting: Splitting,
  watchdog?: Watchdog,
): Promise<RenderResult | HandedOff> {
  const stream = streamRecipe(job.preset);
  if (stream) return renderStreamJob(splitting, job, ctx, policy, stream);
  const source = join(ctx.workDir, "source");
  const downloaded = await downloadSource(job.inputUrl, source, policy, ctx.signal);
  ctx.log({ stage: "download", bytes: downloaded.bytes, seconds: downloaded.seconds });
  await assertSelfContained(source);
  const probed = await probeSource(source, { signal: ctx.signal, workDir: ctx.workDir, watchdog });
  const { probe } = probed;
  ctx.log({ stage: "probe", probe });
  if (probe.duration > job.maxSourceSeconds) {
    throw JobFailure.durationExceeded(probe.duration, job.maxSourceSeconds, PLAN_DISPLAY_NAMES[job.plan]);
  }
  ctx.onDuration(probe.duration);
  const recipe = splittableRecipe(job.preset);
  if (recipe && probe.video && probe.duration > splitting.settings.minSeconds) {
    const facts = await readSplitFacts(source, probed, { signal: ctx.signal, workDir: ctx.workDir, watchdog });
    const plan = facts && planSplit(probe, facts, splitting.settings);
    if (plan) return handOff(splitting, job, ctx, { path: source, probe }, plan);
  }
  const output = await encodePreset({
    presetId: job.preset,
    input: source,
    outDir: join(ctx.workDir, "out"),
    probe,
    signal: ctx.signal,
    onProgress: ctx.onProgress,
    log: ctx.log,
    workDir: ctx.workDir,
    watchdog,
  });
  return { output, duration: probe.duration };
}
