import { randomUUID } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { dirname, join } from "node:path";
import { partOutputKey, type SplitPlan } from "../../domain/split";
import { probeSource } from "../../encoder/ffmpeg/probe";
import type { ClaimedJob, InternalApi } from "../../encoder/internal-api";
import type { RenderContext } from "../../encoder/jobs/pipeline";
import { handOff, renderJoin, renderPart, type SplitDeps } from "../../encoder/jobs/split-jobs";
import type { JobStage } from "../../encoder/jobs/stage-log";
import { openRanged, serveRanges } from "../../encoder/source/ranged";
import { readSplitFacts } from "../../encoder/split/facts";
import { keptScratch } from "../../encoder/split/kept-scratch";
import { planSplit, splittableRecipe, type SplitSettings } from "../../encoder/split/plan";
import { createUploader } from "../../encoder/upload/s3";

/** Loopback origins allowed: the tests serve their sources from this machine. */
const RANGED_POLICY = { allowLoopback: true, maxBytes: 1 << 30, timeoutMs: 60_000 };

/** A ranged source's plan, as the encoder makes it (encoder/jobs/preset-job.ts): probed and planned through the proxy. */
async function planByRanges(url: string, settings: SplitSettings): Promise<SplitPlan | null> {
  const remote = await openRanged(url, RANGED_POLICY);
  if (!remote) throw new Error(`${url} serves no ranges`);
  const proxy = await serveRanges(remote, RANGED_POLICY);
  try {
    const input = { path: proxy.url, ranged: true };
    const probed = await probeSource(input);
    const video = probed.probe.video;
    if (!video) throw new Error("no video");
    const facts = await readSplitFacts(input, probed, {}, { bytes: { size: remote.size, read: proxy.read } });
    const plan = facts && planSplit(probed.probe, facts, settings);
    return plan && { ...plan, ranges: { videoIndex: video.index } };
  } finally {
    await proxy.close();
  }
}

/** A local source's plan, its pieces cut and stored by the encoder's split stage. */
async function planPieces(
  deps: SplitDeps,
  job: ClaimedJob,
  source: string,
  settings: SplitSettings,
  ctx: RenderContext,
): Promise<SplitPlan | null> {
  const probed = await probeSource(source);
  const { probe } = probed;
  if (!probe.video) throw new Error("no video");
  const facts = await readSplitFacts(source, probed, {});
  const plan = facts && planSplit(probe, facts, settings);
  if (plan) await handOff(deps, job, ctx, { path: source, probe }, plan);
  return plan;
}

/** The local S3 server's address and credentials (dev/cloud/s3-server.ts). */
interface Storage {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
}

/**
 * A split encode in one process: the encoder's own split stage, parts and join
 * (encoder/jobs/split-jobs.ts) against a real S3 server, the parts and the audio's task run side
 * by side, with the Worker's part only standing in (it takes the plan). A source given as an
 * http URL is read as a ranged origin's: planned from there, every task reading its span from
 * there (plan.ranges); a path is split into stored pieces. The distributed path (the Worker, QStash,
 * several encoders) is the e2e suite's; this checks what the parts and the join make of the
 * frames and the sound.
 */
export function localSplitter(storage: Storage, options: { keep?: boolean } = {}) {
  const uploader = createUploader({ ...storage, region: "auto" });
  const api = { split: async (_id, _claim, plan) => ({ parts: plan.parts.length }) } as Pick<InternalApi, "split">;
  const context = async (dir: string, name: string, stages: JobStage[] = []): Promise<RenderContext> => ({
    workDir: await mkdtemp(join(dir, `${name}-`)),
    signal: new AbortController().signal,
    onProgress: () => undefined,
    onDuration: () => undefined,
    log: (stage) => stages.push(stage),
  });

  return async function splitLocally(
    source: string,
    presetId: string,
    dir: string,
    settings: SplitSettings,
  ): Promise<{
    jobId: string;
    plan: SplitPlan | null;
    outDir: string;
    file: string;
    tasksLog: JobStage[][];
    joinLog: JobStage[];
  }> {
    // As an encoder keeps them (encoder/main.ts): beside the work dirs, on their file system.
    const kept = options.keep ? await keptScratch(join(dir, "kept")) : undefined;
    const deps: SplitDeps = { api: api as InternalApi, uploader, kept };
    const recipe = splittableRecipe(presetId);
    if (!recipe) throw new Error(`${presetId} does not split`);
    const job = {
      id: randomUUID(),
      claim: 1,
      attempt: 0,
      accountId: randomUUID(),
      preset: presetId,
      inputUrl: source,
    } as ClaimedJob;
    const plan = /^https?:/.test(source)
      ? await planByRanges(source, settings)
      : await planPieces(deps, job, source, settings, await context(dir, "split"));
    if (!plan) return { jobId: job.id, plan, outDir: dir, file: "", tasksLog: [], joinLog: [] };
    // The parts, then the audio's task (index parts.length), as the Worker records them.
    const tasks = [...plan.parts, ...(plan.audio ? [null] : [])];
    const tasksLog = tasks.map((): JobStage[] => []);
    await Promise.all(
      tasks.map(async (part, index) => {
        const claimed = {
          jobId: job.id,
          claim: 1,
          attempt: 0,
          accountId: job.accountId,
          preset: presetId,
          inputUrl: job.inputUrl,
          plan,
          part,
        };
        const { path } = await renderPart(
          deps,
          claimed,
          await context(dir, `task-${index}`, tasksLog[index]),
          RANGED_POLICY,
        );
        const key = partOutputKey(job.id, index);
        // As the encoder's pipeline stores a task's output, and keeps it for a join on the same encoder.
        const { etag } = await uploader.storeFile(key, path, "application/octet-stream");
        await kept?.keep(key, path, etag);
      }),
    );
    const parts = tasks.map((_, index) => ({ index, outputKey: partOutputKey(job.id, index) }));
    const joinLog: JobStage[] = [];
    const { output } = await renderJoin(deps, { job, plan, parts }, await context(dir, "join", joinLog));
    return output.kind === "file"
      ? {
          jobId: job.id,
          plan,
          outDir: dirname(output.path),
          file: output.path.slice(dirname(output.path).length + 1),
          tasksLog,
          joinLog,
        }
      : { jobId: job.id, plan, outDir: output.dir, file: "", tasksLog, joinLog };
  };
}
