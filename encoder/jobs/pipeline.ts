import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { JOB_DELIVERY_RETRIES, outputKeyFor } from "../../domain/jobs";
import { PART_ATTEMPTS, partOutputKey, type TaskInput } from "../../domain/split";
import { JobFailure } from "../failure";
import type { JobOutput } from "../ffmpeg/outputs";
import {
  briefly,
  JobGoneError,
  type ClaimedJob,
  type ClaimedJoin,
  type ClaimedPart,
  type InternalApi,
} from "../internal-api";
import type { HeadStart } from "../split/head-start";
import type { KeptScratch } from "../split/kept-scratch";
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
  /**
   * Runs another delivery of the job's work in this process, as if it had come here by QStash:
   * claimed, heartbeated and reported on its own. The delivery this context serves answers only
   * once it is done (and keeps its work dir until then), so the encoder's load counts it, and
   * the files of that dir `headStart` reads and writes stay. Absent where nothing can run beside.
   */
  alongside?: (delivery: Delivery, headStart?: HeadStart) => void;
  /** The part's encode, begun before its claim by the encoder that split the job (the part it keeps): adopted, not begun again. */
  headStart?: HeadStart;
}

export interface RenderResult {
  output: JobOutput;
  /** Source (or timeline) duration in seconds, recorded on the job. */
  duration: number | null;
}

/** A job whose parts the Worker now holds (docs/scaling.md): its delivery is done, the parts and the join finish it. */
export interface HandedOff {
  /** How many parts, whether an audio task, and what the tasks read: the source by ranges, or pieces stored. */
  handedOff: { parts: number; audio: boolean; reads: TaskInput };
  duration: number;
}

export type Renderer = (job: ClaimedJob, ctx: RenderContext) => Promise<RenderResult | HandedOff>;
type JoinRenderer = (join: ClaimedJoin, ctx: RenderContext) => Promise<RenderResult>;
/** Renders one part of a split job into a local file, which the pipeline uploads as the part's output. */
type PartRenderer = (part: ClaimedPart, ctx: RenderContext) => Promise<{ path: string }>;

export interface Renderers {
  job: Renderer;
  part: PartRenderer;
  join: JoinRenderer;
}

export interface PipelineDeps {
  api: InternalApi;
  uploader: Uploader;
  render: Renderers;
  workRoot: string;
  heartbeatMs: number;
  /** This encoder's name in the job-stage lines (ENCODER_NAME). */
  encoderName: string;
  /** Where the job-stage lines go (stdout in the encoder). */
  log: (line: string) => void;
  /** The split scratch this encoder stored, kept for its own later tasks (the parts it encoded, for a join here). */
  kept?: KeptScratch;
}

/**
 * A message, as QStash delivers it: the job and which of its dispatches this is, and for a split
 * job's work, which part, or its join.
 */
export type Delivery =
  | { jobId: string; dispatch: number; part?: undefined; join?: undefined }
  | { jobId: string; dispatch: number; part: number; join?: undefined }
  | { jobId: string; dispatch: number; join: true; part?: undefined };

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
 * What one delivery works on, the same way whatever it is: claimed, heartbeated, worked in a
 * private dir, reported. A job and its join hold the job's lease and report on the job; a
 * part holds its own (docs/scaling.md).
 */
interface Work<C> {
  claim(): Promise<C>;
  /** The attempt and the attempts in all, for the log, and the lease its beats and reports name. */
  describe(claimed: C): {
    claim: number;
    attempt: number;
    attempts: number;
    preset: string;
    dir: string;
    part?: { index: number; count: number };
  };
  beat(claimed: C, beat: { progress?: number; duration?: number }): Promise<unknown>;
  /** Renders and uploads; resolves with the key to report, or with the parts the job was handed off as. */
  run(claimed: C, ctx: RenderContext): Promise<Finished>;
  complete(claimed: C, key: string, duration: number | null): Promise<unknown>;
  /** Answers the status after the report (`queued`: another attempt follows). */
  fail(claimed: C, failure: JobFailure, duration: number | null): Promise<{ status: string }>;
}

type Finished = { key: string; duration: number | null } | HandedOff;

/** Uploads a rendered output under the job's output prefix. */
async function uploadOutput(deps: PipelineDeps, job: ClaimedJob, rendered: RenderResult, ctx: RenderContext) {
  const key = outputKeyFor(job.accountId, job.id, rendered.output.fileName);
  const out = rendered.output;
  const uploadStarted = performance.now();
  const bytes =
    out.kind === "file"
      ? await deps.uploader.uploadFile(key, out.path, out.contentType, ctx.signal)
      : await deps.uploader.uploadStream(key, zipStream(out.dir, out.files), "application/zip", ctx.signal);
  ctx.log({ stage: "upload", bytes, seconds: since(uploadStarted) });
  return { key, duration: rendered.duration };
}

/** The job's own lease, heartbeat and reports: for a job's delivery, and for its join's (`joinedOf`: what it joins). */
function onTheJob<C>(deps: PipelineDeps, jobOf: (claimed: C) => ClaimedJob, joinedOf?: (claimed: C) => string) {
  return {
    describe: (claimed: C) => {
      const job = jobOf(claimed);
      const joined = joinedOf?.(claimed);
      return {
        claim: job.claim,
        attempt: job.attempt,
        attempts: ATTEMPTS,
        preset: joined === undefined ? job.preset : `${job.preset}, join of ${joined}`,
        dir: joined === undefined ? `job-${job.id}` : `job-${job.id}-join`,
      };
    },
    beat: (claimed: C, beat: { progress?: number; duration?: number }) =>
      deps.api.heartbeat(jobOf(claimed).id, jobOf(claimed).claim, beat),
    complete: (claimed: C, key: string, duration: number | null) =>
      deps.api.complete(jobOf(claimed).id, jobOf(claimed).claim, key, duration),
    fail: (claimed: C, failure: JobFailure, duration: number | null) =>
      deps.api.fail(jobOf(claimed).id, jobOf(claimed).claim, {
        errorMessage: failure.message,
        retryable: failure.retryable,
        duration: duration ?? failure.duration ?? null,
      }),
  };
}

function workOf(deps: PipelineDeps, delivery: Delivery): Work<unknown> {
  const { jobId, dispatch } = delivery;
  if (delivery.part !== undefined) {
    const index = delivery.part;
    const work: Work<ClaimedPart> = {
      claim: () => deps.api.claimPart(jobId, index, dispatch),
      describe: (p) => ({
        claim: p.claim,
        attempt: p.attempt,
        attempts: PART_ATTEMPTS,
        preset: p.preset,
        dir: `job-${jobId}-part-${index}`,
        part: { index, count: p.plan.parts.length },
      }),
      beat: (p, { progress }) => deps.api.partHeartbeat(jobId, index, p.claim, { progress }),
      async run(p, ctx) {
        const { path } = await deps.render.part(p, ctx);
        const key = partOutputKey(jobId, index);
        const uploadStarted = performance.now();
        const { bytes, etag } = await deps.uploader.storeFile(key, path, "application/octet-stream", ctx.signal);
        ctx.log({ stage: "upload", bytes, seconds: since(uploadStarted) });
        // For the join, should it come to this encoder.
        await deps.kept?.keep(key, path, etag);
        return { key, duration: null };
      },
      complete: (p, key) => deps.api.completePart(jobId, index, p.claim, key),
      fail: (p, failure) =>
        deps.api.failPart(jobId, index, p.claim, { errorMessage: failure.message, retryable: failure.retryable }),
    };
    return work as Work<unknown>;
  }
  if (delivery.join) {
    const work: Work<ClaimedJoin> = {
      claim: () => deps.api.claimJoin(jobId, dispatch),
      ...onTheJob<ClaimedJoin>(
        deps,
        (j) => j.job,
        (j) => `${j.plan.parts.length} parts${j.plan.audio ? " and the audio" : ""}`,
      ),
      async run(j, ctx) {
        return uploadOutput(deps, j.job, await deps.render.join(j, ctx), ctx);
      },
    };
    return work as Work<unknown>;
  }
  const work: Work<ClaimedJob> = {
    claim: () => deps.api.claim(jobId, dispatch),
    ...onTheJob<ClaimedJob>(deps, (job) => job),
    async run(job, ctx) {
      const rendered = await deps.render.job(job, ctx);
      if ("handedOff" in rendered) return rendered;
      return uploadOutput(deps, job, rendered, ctx);
    },
  };
  return work as Work<unknown>;
}

/** The parallel deliveries of one job's work a server may run at once: the job (or its join), and each part. */
export function flightKey(delivery: Delivery): string {
  if (delivery.part !== undefined) return `${delivery.jobId}/part/${delivery.part}`;
  return delivery.join ? `${delivery.jobId}/join` : delivery.jobId;
}

/**
 * One delivery: claim, render in a private work dir while heartbeating, upload, report. It runs
 * in the job's scope: an error thrown from anything the work started (a socket, a stream, a
 * timer), which no try/catch sees, reaches the process's crash guard, which hands it back here
 * through the scope's `fail`, and the work fails as any other failure would.
 */
export function processDelivery(
  deps: PipelineDeps,
  delivery: Delivery,
  headStart?: HeadStart,
): Promise<DeliveryResult> {
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
  return runInJobScope(scope, () => deliver(deps, jobId, workOf(deps, delivery), abort, headStart)).finally(() => {
    ended = true;
  });
}

/** How an attempt ended, before the Worker is told. */
type Outcome =
  | { kind: "completed"; key: string }
  | ({ kind: "handed-off" } & HandedOff["handedOff"])
  | { kind: "failed"; failure: JobFailure }
  | { kind: "gone"; status: string };

/**
 * The work dir is removed whatever happens; a cancel seen by the heartbeat aborts the render
 * (FFmpeg is killed) and the job is left as the Worker has it. The heartbeat runs until the
 * Worker has the report, so a report that waits out an outage of the Worker does not leave the
 * work looking abandoned to the sweep once the Worker is back.
 */
async function deliver<C>(
  deps: PipelineDeps,
  jobId: string,
  work: Work<C>,
  abort: AbortController,
  head: HeadStart | undefined,
): Promise<DeliveryResult> {
  const started = performance.now();
  let claimed: C;
  try {
    claimed = await untilAborted(work.claim(), abort.signal);
  } catch (err) {
    // Still processing: another encoder holds the work and beats. Delivered again later, this
    // message takes it over should that encoder have died meanwhile.
    if (err instanceof JobGoneError) return err.status === "processing" ? "retry" : "done";
    // The Worker could not be reached for the whole retry window: QStash delivers it again.
    throw err;
  }
  const about = work.describe(claimed);
  const where = { encoder: deps.encoderName, part: about.part };
  const log: StageLog = (stage) => deps.log(formatStage(jobId, stage, where));
  log({ stage: "claim", attempt: about.attempt, attempts: about.attempts, preset: about.preset });

  let workDir: string;
  try {
    // Made again if it went (a cleaner emptied /tmp): it is made only at start-up otherwise.
    await mkdir(deps.workRoot, { recursive: true });
    workDir = await mkdtemp(join(deps.workRoot, `${about.dir}-`));
  } catch (err) {
    // The disk full or the root unwritable: the claimed attempt fails like any other, rather than being left unreported.
    const outcome: Outcome = { kind: "failed", failure: JobFailure.internal(err) };
    return report(work, claimed, about, outcome, null, log, started);
  }
  const heartbeat = startHeartbeat(
    (beat) => work.beat(claimed, beat),
    deps.heartbeatMs,
    (status) => abort.abort(new JobGoneError(status)),
  );
  let duration: number | null = null;
  const besides: Promise<unknown>[] = [];
  const ctx: RenderContext = {
    workDir,
    signal: abort.signal,
    onProgress: (f) => heartbeat.setProgress(f * 0.95),
    onDuration: (seconds) => {
      duration = seconds;
      heartbeat.setDuration(seconds);
    },
    log,
    headStart: head,
    alongside: (delivery, besideHead) => {
      besides.push(
        processDelivery(deps, delivery, besideHead)
          .catch((err) =>
            // No message to deliver it again: the sweep finds the work quiet and dispatches it.
            deps.log(formatStage(jobId, { stage: "error", message: `work beside it stopped: ${briefly(err)}` }, where)),
          )
          // Its claim refused, or its work dir not made: the encode begun for it ends here.
          .finally(() => besideHead?.stop()),
      );
    },
  };
  const running = work.run(claimed, ctx);
  const finishedAs = (finished: Finished): Outcome => {
    duration = finished.duration;
    return "handedOff" in finished
      ? { kind: "handed-off", ...finished.handedOff }
      : { kind: "completed", key: finished.key };
  };
  try {
    const outcome = await untilAborted(running, abort.signal).then(finishedAs, async (err): Promise<Outcome> => {
      // An abort's reason is what ended the work: a cancel (the job is gone) or an error the crash guard handed over.
      const cause = abort.signal.aborted ? abort.signal.reason : err;
      if (!(cause instanceof JobGoneError)) return { kind: "failed", failure: JobFailure.of(cause) };
      // Once the Worker holds a job's parts it refuses the job's heartbeat, and a beat can land
      // before the split's own answer: the split that is then answered is the attempt's end.
      let handedOff: Outcome | undefined;
      await settledWithin(
        running.then((finished) => {
          if ("handedOff" in finished) handedOff = finishedAs(finished);
        }),
        WIND_DOWN_MS,
      );
      return handedOff ?? { kind: "gone", status: cause.status };
    });
    return await report(work, claimed, about, outcome, duration, log, started);
  } finally {
    await heartbeat.stop();
    await settledWithin(running, WIND_DOWN_MS);
    await Promise.all(besides);
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Tells the Worker how the attempt ended. The API client asks again while the Worker fails, so
 * an outage shorter than its window costs nothing; a report that still fails is thrown, QStash
 * delivers the work again, and that delivery's claim counts an interruption, not an attempt at
 * the source. A report never turns into a failure of the job: the job's work is not what failed.
 */
async function report<C>(
  work: Work<C>,
  claimed: C,
  about: { attempt: number; attempts: number },
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
      case "handed-off":
        log({
          stage: "split",
          parts: outcome.parts,
          audio: outcome.audio,
          reads: outcome.reads,
          seconds: since(started),
        });
        return "done";
      case "completed":
        await work.complete(claimed, outcome.key, duration);
        log({ stage: "completed", seconds: since(started) });
        return "done";
      case "failed": {
        const { failure } = outcome;
        // The Worker decides whether another attempt follows (it dispatches the retry itself).
        const { status } = await work.fail(claimed, failure, duration);
        log({
          stage: "failed",
          reason: failure.message,
          cause: failure.describeCause(),
          final: status !== "queued",
          attempt: about.attempt,
          attempts: about.attempts,
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
