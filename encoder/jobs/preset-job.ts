import { join } from "node:path";
import { PLAN_DISPLAY_NAMES } from "../../domain/plans";
import { JobFailure } from "../failure";
import { encodePreset } from "../ffmpeg/encode";
import { probeFile } from "../ffmpeg/probe";
import type { Watchdog } from "../ffmpeg/watchdog";
import type { ClaimedJob } from "../internal-api";
import { downloadSource, type DownloadPolicy } from "../source/download";
import { assertSelfContained } from "../source/self-contained";
import type { RenderContext, RenderResult } from "./pipeline";

/** A preset job: download the source, probe it, check the plan's duration limit, encode. */
export async function renderPresetJob(
  job: ClaimedJob,
  ctx: RenderContext,
  policy: DownloadPolicy,
  watchdog?: Watchdog,
): Promise<RenderResult> {
  const source = join(ctx.workDir, "source");
  const downloaded = await downloadSource(job.inputUrl, source, policy, ctx.signal);
  ctx.log({ stage: "download", bytes: downloaded.bytes, seconds: downloaded.seconds });
  await assertSelfContained(source);
  const probe = await probeFile(source, { signal: ctx.signal, workDir: ctx.workDir, watchdog });
  ctx.log({ stage: "probe", probe });
  if (probe.duration > job.maxSourceSeconds) {
    throw JobFailure.durationExceeded(probe.duration, job.maxSourceSeconds, PLAN_DISPLAY_NAMES[job.plan]);
  }
  ctx.onDuration(probe.duration);
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
