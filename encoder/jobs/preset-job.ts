import { join } from "node:path";
import { streamRecipe } from "../../domain/stream/layout";
import { encodePreset } from "../ffmpeg/encode";
import { type ProbedSource, probeSource } from "../ffmpeg/probe";
import type { RunOptions } from "../ffmpeg/run";
import type { Watchdog } from "../ffmpeg/watchdog";
import type { ClaimedJob } from "../internal-api";
import { type DownloadPolicy, downloadSource, downloadUnlessRanged } from "../source/download";
import { openRanged, probeRanged, serveRanges } from "../source/ranged";
import { assertSelfContained } from "../source/self-contained";
import { readSplitFacts } from "../split/facts";
import { planSplit, splittableRecipe, type SplitSettings } from "../split/plan";
import { handOverPlan } from "./hand-over";
import type { HandedOff, RenderContext, RenderResult } from "./pipeline";
import { checkSource } from "./source-limits";
import { handOff, type SplitDeps } from "./split-jobs";
import { renderStreamJob } from "./stream-job";

/** How a long source is split, and what the split stage stores and tells through. */
export interface Splitting extends SplitDeps {
  settings: SplitSettings;
}

/**
 * A preset job: probe the source, check the plan's duration limit, then encode it, or hand it
 * off in parts when it is long and its preset splits (docs/scaling.md). For a preset that splits,
 * a large source (SPLIT_RANGED_MIN_BYTES) whose origin serves byte ranges is read where it is:
 * a long one is planned from there and its parts read their spans from there too, so it is never
 * downloaded whole. Any other source is downloaded, probed, and split into stored pieces when it
 * is long.
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
  const options = { signal: ctx.signal, workDir: ctx.workDir, watchdog };
  const recipe = splittableRecipe(job.preset);
  const source = join(ctx.workDir, "source");
  const { rangedMinBytes } = splitting.settings;
  let downloaded =
    recipe && rangedMinBytes !== undefined
      ? await downloadUnlessRanged(job.inputUrl, source, policy, rangedMinBytes, ctx.signal)
      : await downloadSource(job.inputUrl, source, policy, ctx.signal);
  let ranged: ProbedSource | null = null;
  if (!downloaded) {
    const split = await splitByRanges(job, ctx, policy, splitting, options);
    if (split && "handedOff" in split) return split;
    ranged = split;
    downloaded = await downloadSource(job.inputUrl, source, policy, ctx.signal);
  }
  ctx.log({ stage: "download", bytes: downloaded.bytes, seconds: downloaded.seconds });
  await assertSelfContained(source);
  let probed = ranged;
  if (!probed) {
    probed = await probeSource(source, options);
    checkSource(job, ctx, probed);
    const { probe } = probed;
    if (recipe && probe.video && probe.duration > splitting.settings.minSeconds) {
      const facts = await readSplitFacts(source, probed, options, { warn: warnedIn(ctx) });
      const plan = facts && planSplit(probe, facts, splitting.settings);
      if (plan) return handOff(splitting, job, ctx, { path: source, probe }, plan);
    }
  }
  const output = await encodePreset({
    presetId: job.preset,
    input: source,
    outDir: join(ctx.workDir, "out"),
    probe: probed.probe,
    signal: ctx.signal,
    onProgress: ctx.onProgress,
    log: ctx.log,
    workDir: ctx.workDir,
    watchdog,
  });
  return { output, duration: probed.probe.duration };
}

const warnedIn = (ctx: RenderContext) => (message: string) => ctx.log({ stage: "error", message });

/**
 * The source read by ranges through this encoder's proxy of its origin
 * (docs/scaling.md#parts-that-read-the-source-by-ranges): sniffed, probed, and, when it is long,
 * planned from its index (or a scan of its packets) and handed over, every task reading its own
 * span from the origin; this encoder keeps the first part and the audio. Answers the probe when
 * the source does not split (it is downloaded then, and encoded whole), null when the origin
 * serves no ranges or the source is in a container the ranged reader does not take.
 */
async function splitByRanges(
  job: ClaimedJob,
  ctx: RenderContext,
  policy: DownloadPolicy,
  splitting: Splitting,
  options: RunOptions,
): Promise<HandedOff | ProbedSource | null> {
  const remote = await openRanged(job.inputUrl, policy, ctx.signal);
  if (!remote) return null;
  const proxy = await serveRanges(remote, policy, ctx.signal);
  const started = performance.now();
  try {
    const ranged = await probeRanged(proxy, options);
    if (!ranged) return null;
    const { input, probed } = ranged;
    checkSource(job, ctx, probed);
    const { probe } = probed;
    if (!probe.video || probe.duration <= splitting.settings.minSeconds) return probed;
    const bytes = { size: remote.size, read: proxy.read };
    const facts = await readSplitFacts(input, probed, options, { bytes, warn: warnedIn(ctx) });
    const plan = facts && planSplit(probe, facts, splitting.settings);
    if (!plan) return probed;
    const start = [0, ...(plan.audio ? [plan.parts.length] : [])];
    const ranges = { videoIndex: probe.video.index };
    return await handOverPlan(splitting.api, job, ctx, { ...plan, ranges }, start, probe.duration);
  } finally {
    ctx.log({ stage: "download", bytes: proxy.bytesServed(), seconds: (performance.now() - started) / 1000 });
    await proxy.close();
  }
}
