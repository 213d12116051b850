import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { JOB_DELIVERY_RETRIES, outputKeyFor } from "../../domain/jobs";
import { JobFailure } from "../failure";
import type { JobOutput } from "../ffmpeg/outputs";
import { JobGoneError, type ClaimedJob, type InternalApi } from "../internal-api";
import type { Uploader } from "../upload/s3";
import { zipStream } from "../upload/zip";
import { startHeartbeat } from "./heartbeat";
import { runInJobScope } from "./job-scope";
import { formatStage, type StageLog } from "./stage-log";

/** What a renderer gets from the pipeline for one job. */
export interface RenderContext {
  workDir: string;
  signal: AbortSignal;
  onProgress(fraction: number): void;
  /** The source's (or the timeline's) duration, as soon as it is known: the job shows it while it runs. */
  onDuration(seconds: number): void;
  /** One line per stage (download, probe, FFmpeg runs) in the job's log. */
  log: StageLog;
}

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
  /** This encoder's name (ENCODER_NAME), in every job-stage line. */
  encoderName: string;
  /** Where the job-stage lines go (stdout in the encoder). */
  log: (line: string) => void;
}

/** A job's message, as QStash delivers it: the job, and which of its dispatches this is. */
export interface Delivery {
  jobId: string;
  dispatch: number;
}

/** `retry`: answer QStash with an error so it delivers again; `done`: the delivery is settled. */
export type DeliveryResult = "done" | "retry";

const ATTEMPTS = JOB_DELIVERY_RETRIES + 1;
/** How long an aborted job's work may take to wind down (FFmpeg killed, requests closed) before its dir goes. */
const WIND_DOWN_MS = 10_000;

/** `promise`, or the signal's reason as soon as it aborts, whichever comes first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Waits for `promise` to settle, but no longer than `ms`. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((r) => (timer = setTimeout(r, ms)));
  await Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    waited,
  ]);
  clearTimeout(timer);
}

const since = (start: number) => (performance.now() - start) / 1000;

/**
 * One delivery of one job: claim, render in a private work dir while heartbeating, upload,
 * report. It runs in the job's scope: an error thrown from anything the job started (a socket,
 * a stream, a timer), which no try/catch sees, reaches the process's crash guard, which hands
 * it back here through the scope's `fail`, and the job fails as any other failure would.
 */
export function processDelivery(deps: PipelineDeps, delivery: Delivery): Promise<DeliveryResult> {
  const { jobId } = delivery;
  const abort = new AbortController();
  let ended = false;
  const scope = {
    jobId,
    fail(err: unknown) {
      if (ended) return false;
      abort.abort(err);
      return true;
    },
  };
  return runInJobScope(scope, () => deliver(deps, delivery, abort)).finally(() => {
    ended = true;
  });
}

/** How a job's attempt ended, before the Worker is told. */
type Outcome =
  | { kind: "completed"; key: string }
  | { kind: "failed"; failure: JobFailure }
  | { kind: "gone"; status: string };

/**
 * The work dir is removed whatever happens; a cancel seen by the heartbeat aborts the render
 * (FFmpeg is killed) and the job is left as the Worker has it. The heartbeat runs until the
 * Worker has the report, so a report that waits out an outage of the Worker does not leave the
 * job looking abandoned to the sweep once the Worker is back.
 */
async function deliver(deps: PipelineDeps, delivery: Delivery, abort: AbortController): Promise<DeliveryResult> {
  const started = performance.now();
  let job: ClaimedJob;
  try {
    job = await untilAborted(deps.api.claim(delivery.jobId, delivery.dispatch), abort.signal);
  } catch (err) {
    // Still processing: another encoder holds the job and beats. Delivered again later, this
    // message takes the job over should that encoder have died meanwhile.
    if (err instanceof JobGoneError) return err.status === "processing" ? "retry" : "done";
    // The Worker could not be reached for the whole retry window: QStash delivers the job again.
    throw err;
  }
  const log: StageLog = (stage) => deps.log(formatStage(job.id, stage, { encoder: deps.encoderName }));
  log({ stage: "claim", attempt: job.attempt, attempts: ATTEMPTS, preset: job.preset });

  let workDir: string;
  try {
    // Made again if it went (a cleaner emptied /tmp): it is made only at start-up otherwise.
    await mkdir(deps.workRoot, { recursive: true });
    workDir = await mkdtemp(join(deps.workRoot, `job-${job.id}-`));
  } catch (err) {
    // The disk full or the root unwritable: the claimed job's attempt fails like any other, rather than being left unreported.
    return report(deps, job, { kind: "failed", failure: JobFailure.internal(err) }, null, log, started);
  }
  const heartbeat = startHeartbeat(deps.api, job, deps.heartbeatMs, (status) => abort.abort(new JobGoneError(status)));
  let duration: number | null = null;
  const work = (async () => {
    const ctx: RenderContext = {
      workDir,
      signal: abort.signal,
      onProgress: (f) => heartbeat.setProgress(f * 0.95),
      onDuration: (seconds) => heartbeat.setDuration(seconds),
      log,
    };
    const rendered = await deps.render(job, ctx);
    duration = rendered.duration;
    abort.signal.throwIfAborted();
    const key = outputKeyFor(job.accountId, job.id, rendered.output.fileName);
    const out = rendered.output;
    const uploadStarted = performance.now();
    const bytes =
      out.kind === "file"
        ? await deps.uploader.uploadFile(key, out.path, out.contentType, abort.signal)
        : await deps.uploader.uploadStream(key, zipStream(out.dir, out.files), "application/zip", abort.signal);
    log({ stage: "upload", bytes, seconds: since(uploadStarted) });
    return key;
  })();
  try {
    const outcome = await untilAborted(work, abort.signal).then(
      (key): Outcome => ({ kind: "completed", key }),
      (err): Outcome => {
        // An abort's reason is what ended the job: a cancel (the job is gone) or an error the crash guard handed over.
        const cause = abort.signal.aborted ? abort.signal.reason : err;
        return cause instanceof JobGoneError
          ? { kind: "gone", status: cause.status }
          : { kind: "failed", failure: JobFailure.of(cause) };
      },
    );
    return await report(deps, job, outcome, duration, log, started);
  } finally {
    await heartbeat.stop();
    await settledWithin(work, WIND_DOWN_MS);
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Tells the Worker how the attempt ended. The API client asks again while the Worker fails, so
 * an outage shorter than its window costs nothing; a report that still fails is thrown, QStash
 * delivers the job again, and that delivery's claim counts an interruption, not an attempt at
 * the source. A report never turns into a failure of the job: the job's work is not what failed.
 */
async function report(
  deps: PipelineDeps,
  job: ClaimedJob,
  outcome: Outcome,
  duration: number | null,
  log: StageLog,
  started: number,
): Promise<DeliveryResult> {
  try {
    switch (outcome.kind) {
      case "gone":
        log({ stage: "cancelled", status: outcome.status });
        return "done";
      case "completed":
        await deps.api.complete(job.id, job.claim, outcome.key, duration);
        log({ stage: "completed", seconds: since(started) });
        return "done";
      case "failed": {
        const { failure } = outcome;
        // The Worker decides whether another attempt follows (it dispatches the retry itself).
        const { status } = await deps.api.fail(job.id, job.claim, {
          errorMessage: failure.message,
          retryable: failure.retryable,
          duration: duration ?? failure.duration ?? null,
        });
        log({
          stage: "failed",
          reason: failure.message,
          cause: failure.describeCause(),
          final: status !== "queued",
          attempt: job.attempt,
          attempts: ATTEMPTS,
        });
        return "done";
      }
    }
  } catch (err) {
    if (!(err instanceof JobGoneError)) throw err;
    log({ stage: "cancelled", status: err.status });
    return "done";
  }
}
