import { open } from "node:fs/promises";
import { join } from "node:path";
import { PLAN_DISPLAY_NAMES } from "../../domain/plans";
import { encodePreset } from "../ffmpeg/encode";
import { probeFile } from "../ffmpeg/probe";
import type { ClaimedJob } from "../internal-api";
import { downloadSource, type DownloadPolicy } from "../source/download";
import { PermanentJobError, durationExceeded } from "./failures";
import type { RenderResult } from "./pipeline";
import type { RenderContext } from "./output";

/**
 * Text formats that make FFmpeg open further files or URLs (HLS and DASH manifests, concat
 * lists, SDP): refused before FFmpeg sees them, so it only ever reads the downloaded file.
 */
const REFERENCING_FORMATS = [/^\s*#EXTM3U/, /^\s*ffconcat/, /^\s*<\?xml[\s\S]*<MPD/, /^\s*<MPD/, /^v=0\s*$/m];

export async function assertSelfContained(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4096), 0, 4096, 0);
    const head = buffer.subarray(0, bytesRead).toString("latin1");
    if (REFERENCING_FORMATS.some((re) => re.test(head))) {
      throw new PermanentJobError(
        "The source is a playlist or manifest, not a media file. Playlists (HLS, DASH, concat) reference further files and are not accepted as sources.",
      );
    }
  } finally {
    await handle.close();
  }
}

/** A preset job: download the source, probe it, check the plan's duration limit, encode. */
export async function renderPresetJob(job: ClaimedJob, ctx: RenderContext, policy: DownloadPolicy): Promise<RenderResult> {
  const source = join(ctx.workDir, "source");
  await downloadSource(job.inputUrl, source, policy, ctx.signal);
  await assertSelfContained(source);
  const probe = await probeFile(source, { signal: ctx.signal, workDir: ctx.workDir });
  if (probe.duration > job.maxSourceSeconds) {
    throw Object.assign(durationExceeded(probe.duration, job.maxSourceSeconds, PLAN_DISPLAY_NAMES[job.plan]), {
      duration: probe.duration,
    });
  }
  const output = await encodePreset({
    presetId: job.preset,
    input: source,
    outDir: join(ctx.workDir, "out"),
    probe,
    signal: ctx.signal,
    onProgress: ctx.onProgress,
    workDir: ctx.workDir,
  });
  return { output, duration: probe.duration };
}
