import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { JOB_DELIVERY_RETRIES, outputKeyFor } from "../../domain/jobs";
import { JobGoneError, type ClaimedJob, type InternalApi } from "../internal-api";
import type { Uploader } from "../upload/s3";
import { zipStream } from "../upload/zip";
import { describeFailure } from "./failures";
import { startHeartbeat } from "./heartbeat";
import type { JobOutput, RenderContext } from "./output";

export interface RenderResult {
  output: JobOutput;
  /** Source (or timeline) duration in seconds, recorded on the job. */
  duration: number | null;
}

export type Renderer = (job: ClaimedJob, ctx: RenderContext) => Promise<RenderResult>;

export interface PipelineDeps {
  api: InternalApi;
  uploader: Uploader;
  render: Renderer;
  workRoot: string;
  heartbeatMs: number;
}

/** `retry`: answer QStash with an error so it delivers again; `done`: the delivery is settled. */
export type DeliveryResult = "done" | "retry";

/** A failed job's duration, when the failure came after the probe measured it. */
function durationOf(err: unknown): number | null {
  const d = (err as { duration?: unknown })?.duration;
  return typeof d === "number" ? d : null;
}

/**
 * One delivery of one job: claim, render in a private work dir while heartbeating, upload,
 * report. The work dir is removed whatever happens; a cancel seen by the heartbeat aborts the
 * render (FFmpeg is killed) and the job is left as the Worker has it.
 */
export async function processDelivery(deps: PipelineDeps, jobId: string, deliveryAttempt: number): Promise<DeliveryResult> {
  let job: ClaimedJob;
  try {
    job = await deps.api.claim(jobId, deliveryAttempt);
  } catch (err) {
    if (err instanceof JobGoneError) return "done";
    throw err;
  }

  const workDir = await mkdtemp(join(deps.workRoot, `job-${job.id}-`));
  const abort = new AbortController();
  const heartbeat = startHeartbeat(deps.api, job.id, deps.heartbeatMs, (status) => abort.abort(new JobGoneError(status)));
  let duration: number | null = null;
  try {
    const rendered = await deps.render(job, { workDir, signal: abort.signal, onProgress: (f) => heartbeat.setProgress(f * 0.95) });
    duration = rendered.duration;
    abort.signal.throwIfAborted();
    const key = outputKeyFor(job.accountId, job.id, rendered.output.fileName);
    const out = rendered.output;
    if (out.kind === "file") await deps.uploader.uploadFile(key, out.path, out.contentType);
    else await deps.uploader.uploadStream(key, zipStream(out.dir, out.files), "application/zip");
    await heartbeat.stop();
    await deps.api.complete(job.id, key, duration);
    return "done";
  } catch (err) {
    await heartbeat.stop();
    if (abort.signal.aborted || err instanceof JobGoneError) return "done";
    const failure = describeFailure(err);
    const final = !failure.retryable || job.attempt >= JOB_DELIVERY_RETRIES;
    try {
      await deps.api.fail(job.id, { errorMessage: failure.message, attempt: job.attempt, final, duration: duration ?? durationOf(err) });
    } catch (reportErr) {
      if (reportErr instanceof JobGoneError) return "done";
      throw reportErr;
    }
    return final ? "done" : "retry";
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
