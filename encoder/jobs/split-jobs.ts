import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { FINAL_STATUSES } from "../../domain/jobs";
import { audioInputKey, partInputKey, type SplitPlan } from "../../domain/split";
import { JobFailure } from "../failure";
import { CONTENT_TYPES } from "../ffmpeg/args/containers";
import {
  audioPieceCommand,
  audioTaskCommand,
  concatList,
  joinCommand,
  partCommand,
  piecesCommand,
} from "../ffmpeg/args/split";
import { collectOutput } from "../ffmpeg/outputs";
import type { ProbeSummary } from "../ffmpeg/probe";
import { runFfmpeg } from "../ffmpeg/run";
import type { Watchdog } from "../ffmpeg/watchdog";
import { semaphore } from "../concurrency";
import { type FfmpegCommand, type FfmpegInput, STDIN_INPUT } from "../ffmpeg/args/command";
import { type ClaimedJob, type ClaimedJoin, type ClaimedPart, type InternalApi, JobGoneError } from "../internal-api";
import type { DownloadPolicy } from "../source/download";
import { openRanged, serveRanges } from "../source/ranged";
import { splittableRecipe, type SplittableRecipe } from "../split/plan";
import { type HeadStart, headStart } from "../split/head-start";
import type { KeptScratch, TakenFile } from "../split/kept-scratch";
import { storedReports } from "../split/stored-reports";
import type { Uploader } from "../upload/s3";
import type { HandedOff, RenderContext, RenderResult } from "./pipeline";

export interface SplitDeps {
  api: InternalApi;
  uploader: Uploader;
  watchdog?: Watchdog;
  /** The split scratch this encoder stored (inputs it cut, outputs it encoded), for its own later tasks of the job; without it, every task downloads. */
  kept?: KeptScratch;
}

/** FFmpeg runs cutting inputs at once: each a stream copy bound by the disk, whose uploads overlap the next run. */
const CUTS_AT_ONCE = 2;
/**
 * Pieces cut by one FFmpeg run: each start of FFmpeg costs about 0.13 s of a core (it links some
 * 200 libraries), half what copying a 30 s 1080p piece does; more to a run would hold back the
 * first of them until the last is cut (docs/scaling.md#pieces-for-a-source-without-ranges).
 */
const PIECES_PER_RUN = 3;
/** Files moved to or from storage at once by a join. */
const TRANSFERS_AT_ONCE = 4;

/** Pure: the items in runs of `size`, in order. */
const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

const planSeconds = (plan: SplitPlan, frames: number) => (frames * plan.fps.den) / plan.fps.num;

/** The scratch file stored under `key`, from this disk when this encoder stored it and storage still holds that one. */
const takeKept = (deps: SplitDeps, key: string, signal: AbortSignal) =>
  deps.kept?.take(key, () => deps.uploader.objectTag(key, signal));

function recipeOf(presetId: string): SplittableRecipe {
  const recipe = splittableRecipe(presetId);
  if (!recipe) throw JobFailure.internal(new Error(`preset ${presetId} does not split`));
  return recipe;
}

/**
 * The split stage of a source not read by ranges (docs/scaling.md#pieces-for-a-source-without-ranges):
 * every task's input cut by stream copy and stored under the job's scratch prefix, the audio's
 * first, then the parts' pieces in order. The plan
 * goes to the Worker with the first input stored, and each input after it as it lands, so the
 * tasks run while the rest are stored. This encoder keeps the first part's task: it begins the
 * part's encode from the piece on its disk as soon as the piece is cut, and the part's delivery,
 * run beside the storing once the Worker answers it, takes that encode up.
 */
export async function handOff(
  deps: SplitDeps,
  job: ClaimedJob,
  ctx: RenderContext,
  source: { path: string; probe: ProbeSummary },
  plan: SplitPlan,
): Promise<HandedOff> {
  const video = source.probe.video;
  if (!video) throw JobFailure.internal(new Error("a split job without video"));
  const piecesDir = join(ctx.workDir, "pieces");
  await mkdir(piecesDir, { recursive: true });
  const halt = new AbortController();
  const signal = AbortSignal.any([ctx.signal, halt.signal]);
  // The task this encoder runs itself, beside storing the rest: the first part, whose piece is cut
  // first and read from this disk. The audio's task goes by message to a free encoder at once
  // rather than share this core with the storing (docs/scaling.md#the-audio).
  const keep = ctx.alongside ? 0 : undefined;
  const keptInput = join(piecesDir, "0.mkv");
  // In the pieces' dir, which outlives the part's delivery.
  const keptOutput = join(piecesDir, "0.out.nut");
  let head: HeadStart | undefined;
  let kept = false;
  const reports = storedReports(
    async (stored) => {
      const answer = await deps.api.split(job.id, job.claim, plan, stored, keep === undefined ? undefined : [keep]);
      const task = answer.kept?.find((k) => k.index === keep);
      if (task && !kept) {
        kept = true;
        ctx.alongside?.({ jobId: job.id, dispatch: task.dispatch, part: task.index }, head);
      }
    },
    (err) => halt.abort(err),
  );
  const limit = semaphore(CUTS_AT_ONCE);
  // Every key an upload was begun for: one aborted as its object landed may be stored all the same.
  const sent: string[] = [];
  let stored = 0;
  /** One FFmpeg run's inputs, cut, then stored one after another in order. */
  const cutAndStore = (inputs: { index: number; key: string; path: string }[], command: FfmpegCommand) =>
    limit(async () => {
      signal.throwIfAborted();
      await runFfmpeg(command.args, { signal, workDir: ctx.workDir, watchdog: deps.watchdog });
      for (const { index, key, path } of inputs) {
        if (index === keep)
          head = beginKept(deps, job.preset, plan, ctx.workDir, { piece: keptInput, out: keptOutput });
        sent.push(key);
        const { etag } = await deps.uploader.storeFile(key, path, "application/octet-stream", signal);
        // The kept part's encode reads its piece already; any other task of this job that comes here reads its own.
        if (index !== keep) await deps.kept?.keep(key, path, etag);
        stored += 1;
        ctx.onProgress((0.05 * stored) / (plan.parts.length + 1));
        reports.add(index);
      }
    }).catch((err) => {
      // One input that cannot be stored fails the attempt: the others stop rather than go on.
      halt.abort(err);
      throw err;
    });
  const cuts: Promise<void>[] = [];
  const audio = source.probe.audio[0];
  if (plan.audio && audio) {
    // The audio's input first: it is small, and its task goes to the pool with the plan.
    const path = join(piecesDir, "audio");
    cuts.push(
      cutAndStore(
        [{ index: plan.parts.length, key: audioInputKey(job.id), path }],
        audioPieceCommand(source.path, audio, path),
      ),
    );
  }
  // The first piece alone, so the kept part's encode starts soonest; the others a few to a run.
  for (const batch of [plan.parts.slice(0, 1), ...chunks(plan.parts.slice(1), PIECES_PER_RUN)]) {
    const inputs = batch.map((part) => ({
      index: part.index,
      key: partInputKey(job.id, part.index),
      path: part.index === 0 ? keptInput : join(piecesDir, `${part.index}.mkv`),
    }));
    const pieces = batch.map((part, i) => ({ part, out: inputs[i].path }));
    cuts.push(cutAndStore(inputs, piecesCommand(source.path, video.index, pieces)));
  }
  try {
    const results = await Promise.allSettled(cuts);
    await reports.settled();
    // Every input stored and told: the Worker holds the job's work, and a refusal of the job's
    // heartbeat meanwhile (it refuses it from then on) does not undo that.
    const failed = results.find((result) => result.status === "rejected");
    if (failed) throw signal.aborted ? signal.reason : failed.reason;
    return {
      handedOff: { parts: plan.parts.length, audio: plan.audio, reads: "pieces" },
      duration: source.probe.duration,
    };
  } catch (err) {
    // Pieces the Worker never took go with the attempt that stored them. Once it took the plan,
    // the job's scratch is the Worker's to delete when the job ends; a piece that landed after
    // that deletion is this attempt's to delete. A job taken over keeps its pieces: the next
    // attempt stores its own under the same keys.
    const ended = err instanceof JobGoneError && FINAL_STATUSES.includes(err.status);
    if (!reports.handedOver() || ended) await Promise.allSettled(sent.map((key) => deps.uploader.deleteObject(key)));
    await Promise.allSettled(sent.map((key) => deps.kept?.drop(key)));
    throw err;
  } finally {
    // The Worker did not keep the part for this encoder, or the stage failed: the part's delivery encodes it.
    if (!kept) head?.stop();
  }
}

/** The kept part's encode, from its piece on this disk. */
function beginKept(
  deps: SplitDeps,
  preset: string,
  plan: SplitPlan,
  workDir: string,
  files: { piece: string; out: string },
): HeadStart {
  const part = plan.parts[0];
  return headStart(files.out, (hooks) =>
    runFfmpeg(partCommand(recipeOf(preset), plan, part, { piece: files.piece }, files.out).args, {
      ...hooks,
      workDir,
      watchdog: deps.watchdog,
      durationSeconds: planSeconds(plan, part.frameCount),
    }),
  );
}

/**
 * One task: a part, exactly its frames encoded with the preset's video settings; or the audio's,
 * the source's whole audio encoded once with the preset's audio settings. Each reads the source
 * by ranges from its origin when the plan says so, else its piece as it downloads (or from this
 * disk, the part its splitting encoder keeps).
 */
export async function renderPart(
  deps: SplitDeps,
  claimed: ClaimedPart,
  ctx: RenderContext,
  policy: DownloadPolicy,
): Promise<{ path: string }> {
  const { plan, part } = claimed;
  const recipe = recipeOf(claimed.preset);
  const run = (args: string[], seconds: number, stdin?: Readable) =>
    runFfmpeg(args, {
      signal: ctx.signal,
      workDir: ctx.workDir,
      watchdog: deps.watchdog,
      durationSeconds: seconds,
      onProgress: ctx.onProgress,
      log: ctx.log,
      stdin,
    });
  const started = performance.now();
  const logDownload = (bytes: number, onDisk?: true) =>
    ctx.log({ stage: "download", bytes, seconds: (performance.now() - started) / 1000, onDisk });
  /** The task's input, when this encoder cut it: read from its disk, released once encoded. */
  const cutHere = async (key: string) => {
    const piece = await takeKept(deps, key, ctx.signal);
    if (piece) logDownload(piece.bytes, true);
    return piece;
  };
  const { ranges } = plan;
  if (!part) {
    const key = audioInputKey(claimed.jobId);
    const out = join(ctx.workDir, recipe.audioCodec === "libopus" ? "audio.mka" : "audio.m4a");
    const encode = (input: FfmpegInput) =>
      run(audioTaskCommand(recipe, plan, input, out).args, planSeconds(plan, plan.totalFrames));
    if (ranges) {
      await fromOrigin(claimed.inputUrl, ctx, policy, encode);
      return { path: out };
    }
    const local = await cutHere(key);
    if (local) {
      await encode({ path: local.path }).finally(local.release);
      return { path: out };
    }
    const input = join(ctx.workDir, "audio");
    logDownload(await deps.uploader.downloadFile(key, input, ctx.signal));
    await encode({ path: input });
    return { path: out };
  }
  if (ctx.headStart) return { path: await ctx.headStart.adopt(ctx) };
  const out = join(ctx.workDir, "part.nut");
  const length = planSeconds(plan, part.frameCount);
  if (ranges) {
    await fromOrigin(claimed.inputUrl, ctx, policy, (source) =>
      run(partCommand(recipe, plan, part, { source, videoIndex: ranges.videoIndex }, out).args, length),
    );
    return { path: out };
  }
  const key = partInputKey(claimed.jobId, part.index);
  const local = await cutHere(key);
  if (local) {
    await run(partCommand(recipe, plan, part, { piece: local.path }, out).args, length).finally(local.release);
    return { path: out };
  }
  // The piece goes to FFmpeg as it arrives: its download overlaps the encode instead of coming first.
  const piece = await deps.uploader.openObject(key, ctx.signal);
  const encoded = run(partCommand(recipe, plan, part, { piece: STDIN_INPUT }, out).args, length, piece);
  let bytes = 0;
  piece.on("data", (chunk: Buffer) => (bytes += chunk.length));
  // At its close: FFmpeg stops reading once it has the part's frames, before the piece's tail.
  piece.once("close", () => logDownload(bytes));
  await encoded;
  return { path: out };
}

/**
 * `encode` given the source as FFmpeg reads it by ranges, through this encoder's proxy of the
 * origin (encoder/source/ranged.ts): a part seeks it to its span, so only that is read.
 */
async function fromOrigin(
  inputUrl: string,
  ctx: RenderContext,
  policy: DownloadPolicy,
  encode: (source: FfmpegInput) => Promise<unknown>,
): Promise<void> {
  const remote = await openRanged(inputUrl, policy, ctx.signal);
  if (!remote) throw JobFailure.download("the source no longer answers byte ranges");
  const proxy = await serveRanges(remote, policy, ctx.signal);
  const started = performance.now();
  try {
    await encode({ path: proxy.url, ranged: true });
  } finally {
    ctx.log({ stage: "download", bytes: proxy.bytesServed(), seconds: (performance.now() - started) / 1000 });
    await proxy.close();
  }
}

/** The join: the parts' video copied end to end, the encoded audio copied in, the preset's packaging. */
export async function renderJoin(deps: SplitDeps, claimed: ClaimedJoin, ctx: RenderContext): Promise<RenderResult> {
  const { plan } = claimed;
  ctx.onDuration(planSeconds(plan, plan.totalFrames));
  const limit = semaphore(TRANSFERS_AT_ONCE);
  const started = performance.now();
  const byIndex = new Map(claimed.parts.map((p) => [p.index, p.outputKey]));
  const taken: TakenFile[] = [];
  let downloaded = 0;
  /** A task's output: from this disk when this encoder made it, downloaded otherwise. */
  const fetchOutput = (key: string | undefined, name: string) =>
    limit(async () => {
      if (!key) throw JobFailure.scratchMissing();
      const local = await takeKept(deps, key, ctx.signal);
      if (local) {
        taken.push(local);
        return local.path;
      }
      const path = join(ctx.workDir, name);
      downloaded += await deps.uploader.downloadFile(key, path, ctx.signal);
      return path;
    });
  const parts = plan.parts.map((p) => fetchOutput(byIndex.get(p.index), `part-${p.index}.nut`));
  const audio = plan.audio ? fetchOutput(byIndex.get(plan.parts.length), "audio") : Promise.resolve(null);
  try {
    const [partPaths, audioPath] = await Promise.all([Promise.all(parts), audio]);
    ctx.log({ stage: "download", bytes: downloaded, seconds: (performance.now() - started) / 1000 });
    return await joinFiles(deps, claimed, ctx, partPaths, audioPath);
  } finally {
    // After one failed, the others may still be taking files: each is released once all are done.
    await Promise.allSettled([...parts, audio]);
    await Promise.allSettled(taken.map((file) => file.release()));
  }
}

/** The join's FFmpeg over the parts' and the audio's files, and what it made. */
async function joinFiles(
  deps: SplitDeps,
  { job, plan }: ClaimedJoin,
  ctx: RenderContext,
  partPaths: string[],
  audioPath: string | null,
): Promise<RenderResult> {
  const recipe = recipeOf(job.preset);
  const duration = planSeconds(plan, plan.totalFrames);
  const list = join(ctx.workDir, "parts.ffconcat");
  await writeFile(list, concatList(plan, partPaths));
  const outDir = join(ctx.workDir, "out");
  await mkdir(outDir, { recursive: true });
  const file = `output.${recipe.container}`;
  await runFfmpeg(joinCommand(recipe, { list, audio: audioPath }, { dir: outDir, file }).args, {
    signal: ctx.signal,
    workDir: ctx.workDir,
    watchdog: deps.watchdog,
    durationSeconds: duration,
    onProgress: ctx.onProgress,
    log: ctx.log,
  });
  const output = await collectOutput(job.preset, outDir, {
    kind: "file",
    file,
    contentType: CONTENT_TYPES[recipe.container],
  });
  return { output, duration };
}
