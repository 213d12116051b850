import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CaptionParseError, parseCaptions } from "../../domain/captions";
import { validateEdl } from "../../domain/edl/validate";
import { semaphore } from "../concurrency";
import { JobFailure } from "../failure";
import { CONTENT_TYPES } from "../ffmpeg/args/containers";
import { probeFile, probeImage } from "../ffmpeg/probe";
import { runFfmpeg } from "../ffmpeg/run";
import type { Watchdog } from "../ffmpeg/watchdog";
import type { ClaimedJob } from "../internal-api";
import type { CaptionCue } from "../../domain/edl/validated-edl";
import { ByteBudget, downloadSource, type DownloadPolicy } from "../source/download";
import { assertSelfContained } from "../source/self-contained";
import { assetCap, planAssets, planFonts, inPointErrors, type AssetNeed } from "../timeline/assets";
import { compileTimeline, fontKey, type TimelineAssets } from "../timeline/compile";
import { resolveFont } from "../timeline/fonts";
import type { RenderContext, RenderResult } from "./pipeline";

/**
 * Assets downloaded and probed (fonts looked up) at once. A timeline may name hundreds; all at
 * once would be as many connections, ffprobes and fc-matches, beside the other job's encode.
 */
const ASSETS_AT_ONCE = 4;

/** The asset's failure, of the same kind, naming the clip the asset belongs to. */
const forClip = (clipId: string, what: string, err: unknown) =>
  JobFailure.of(err).within(`Asset for clip "${clipId}" ${what}`);

/** A probe's failure: the source guard refused the asset, or FFmpeg could not read it. */
const probeFailure = (err: unknown) =>
  err instanceof JobFailure && err.kind === "source-refused" ? "was refused" : "could not be decoded";

async function overlayImage(
  path: string,
  clipId: string,
  ctx: RenderContext,
  signal: AbortSignal,
  watchdog: Watchdog | undefined,
) {
  const image = await probeImage(path, { signal, workDir: ctx.workDir, watchdog }).catch((err) => {
    throw forClip(clipId, probeFailure(err), err);
  });
  if (!image || !["png", "mjpeg"].includes(image.codec))
    throw JobFailure.unsuitableSource(`Overlay "${clipId}" is not a PNG or JPEG image`);
  return { path, width: image.width, height: image.height };
}

/**
 * A caption file's cues. A file that is not SRT or WebVTT as the parser reads them fails the job,
 * not retried (another attempt reads the same file), naming the clip and the line.
 */
async function captionCues(path: string, clipId: string) {
  const text = await readFile(path, "utf8");
  try {
    return parseCaptions(text);
  } catch (err) {
    if (err instanceof CaptionParseError) throw JobFailure.invalidTimeline(`Caption clip ${clipId}: ${err.message}`);
    throw err;
  }
}

/**
 * An EDL job, in the contract's order (docs/contract.md §1.6): validate, download assets (each
 * distinct URL once, through the source guard), process clips, assemble and encode in one
 * FFmpeg run.
 */
export async function renderTimelineJob(
  job: ClaimedJob,
  ctx: RenderContext,
  policy: DownloadPolicy,
  watchdog?: Watchdog,
): Promise<RenderResult> {
  const validation = validateEdl(job.edl, job.plan);
  if (!validation.valid || !validation.edl) {
    throw JobFailure.invalidTimeline(`The timeline is not valid: ${validation.errors.slice(0, 3).join("; ")}`);
  }
  const edl = validation.edl;
  const captions = new Map<string, CaptionCue[]>();
  const assets: TimelineAssets = { media: new Map(), images: new Map(), fonts: new Map(), captions };
  const durations = new Map<string, number>();

  // The first asset that fails stops the others' downloads and probes, and the job fails once
  // they have stopped: its work dir is removed right after, under them otherwise.
  const stopAssets = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stopAssets.signal]);
  // One source's cap holds for them all together: a job's disk use does not grow with its asset count.
  const assetPolicy: DownloadPolicy = {
    ...policy,
    together: new ByteBudget(policy.maxBytes, "a timeline's assets together"),
  };
  let n = 0;
  const fetchAsset = async (need: AssetNeed) => {
    const { url, uses } = need;
    const path = join(ctx.workDir, `asset-${n++}`);
    const firstClip = uses[0].clipId;
    try {
      const downloaded = await downloadSource(
        url,
        path,
        { ...assetPolicy, ...assetCap(need, policy.maxBytes) },
        signal,
      );
      ctx.log({
        stage: "download",
        bytes: downloaded.bytes,
        seconds: downloaded.seconds,
        asset: `clip "${firstClip}"`,
      });
    } catch (err) {
      throw forClip(firstClip, "could not be downloaded", err);
    }
    await assertSelfContained(path).catch((err) => {
      throw forClip(firstClip, "was refused", err);
    });
    for (const { as, clipId } of uses) {
      if (as === "image") {
        assets.images.set(url, await overlayImage(path, clipId, ctx, signal, watchdog));
        continue;
      }
      if (as === "caption") {
        captions.set(url, await captionCues(path, clipId));
        continue;
      }
      const probe = await probeFile(path, { signal, workDir: ctx.workDir, watchdog }).catch((err) => {
        throw forClip(clipId, probeFailure(err), err);
      });
      ctx.log({ stage: "probe", probe, asset: `clip "${clipId}"` });
      durations.set(url, probe.duration);
      assets.media.set(url, {
        path,
        hasVideo: probe.video !== null,
        hasAudio: probe.audio.length > 0,
        width: probe.video?.width,
        height: probe.video?.height,
        fps: probe.video?.fps,
      });
    }
  };
  let firstFailure: { err: unknown } | undefined;
  const few = semaphore(ASSETS_AT_ONCE);
  await Promise.all(
    [
      ...planAssets(edl).map((need) =>
        few(() => {
          signal.throwIfAborted();
          return fetchAsset(need);
        }),
      ),
      ...planFonts(edl).map((font) =>
        few(async () => {
          assets.fonts.set(fontKey(font), await resolveFont(font.fontFamily, font.fontWeight));
        }),
      ),
    ].map((work) =>
      work.catch((err: unknown) => {
        firstFailure ??= { err };
        stopAssets.abort(err);
      }),
    ),
  );
  if (firstFailure) throw firstFailure.err;
  const errors = inPointErrors(edl, durations);
  if (errors.length > 0) throw JobFailure.invalidTimeline(errors.join("; "));

  const ext = edl.output.container;
  const output = join(ctx.workDir, `output.${ext}`);
  const compiled = compileTimeline(edl, assets, { workDir: ctx.workDir, output });
  ctx.onDuration(compiled.duration);
  await Promise.all(compiled.files.map((f) => writeFile(f.path, f.content)));
  await runFfmpeg(compiled.args, {
    signal: ctx.signal,
    workDir: ctx.workDir,
    watchdog,
    durationSeconds: compiled.duration,
    onProgress: ctx.onProgress,
    log: ctx.log,
  });
  return {
    output: { kind: "file", path: output, fileName: `output.${ext}`, contentType: CONTENT_TYPES[ext] },
    duration: compiled.duration,
  };
}
