import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AwsClient } from "aws4fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startS3Server } from "../../../dev/cloud/s3-server";
import { scratchPrefix } from "../../../domain/split";
import { probeFile } from "../../../encoder/ffmpeg/probe";
import { JobGoneError, type ClaimedJob, type InternalApi } from "../../../encoder/internal-api";
import { handOff } from "../../../encoder/jobs/split-jobs";
import type { RenderContext } from "../../../encoder/jobs/pipeline";
import { readSplitFacts } from "../../../encoder/split/facts";
import { planSplit, splittableRecipe } from "../../../encoder/split/plan";
import { createUploader } from "../../../encoder/upload/s3";
import { makeSource } from "../../support/media";

/**
 * The split stage against the real local S3 server: what it stores, and that an attempt the
 * Worker does not take (the job cancelled meanwhile) leaves nothing under the job's scratch.
 */
let dir: string;
let s3: Awaited<ReturnType<typeof startS3Server>>;
const jobId = "3f1e9a52-0c1d-4d7e-9a57-1b1f4b0c2d11";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hand-off-"));
  s3 = await startS3Server({ host: "127.0.0.1", directory: join(dir, "s3"), bucket: "outputs" });
  await makeSource(join(dir, "source.mp4"), { seconds: 8, width: 320, height: 240 });
});
afterAll(async () => {
  await s3?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function keys(prefix: string): Promise<string[]> {
  const aws = new AwsClient({
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    service: "s3",
    region: "auto",
  });
  const res = await aws.fetch(`${s3.endpoint}/outputs?list-type=2&prefix=${encodeURIComponent(prefix)}`);
  return [...(await res.text()).matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1]);
}

async function splitWith(split: InternalApi["split"]) {
  const source = join(dir, "source.mp4");
  const probe = await probeFile(source);
  const recipe = splittableRecipe("mp4_264_240p");
  if (!recipe || !probe.video) throw new Error("the source should split");
  const facts = await readSplitFacts(source, { video: probe.video.index, audio: probe.audio[0].index }, {});
  const plan = facts && planSplit(recipe, probe, facts, { minSeconds: 4, partSeconds: 2 });
  if (!plan) throw new Error("no plan");
  const uploader = createUploader({ ...s3, region: "auto", bucket: "outputs" });
  const workDir = await mkdtemp(join(dir, "work-"));
  const ctx: RenderContext = {
    workDir,
    signal: new AbortController().signal,
    onProgress: () => undefined,
    onDuration: () => undefined,
    log: () => undefined,
  };
  const job = { id: jobId, claim: 1 } as ClaimedJob;
  const api = { split } as InternalApi;
  return { plan, run: () => handOff({ api, uploader }, job, ctx, { path: source, probe }, plan) };
}

describe("the split stage", () => {
  it("stores every part's piece and the audio under the job's scratch, then hands the plan over", async () => {
    let handed = 0;
    const { plan, run } = await splitWith(async (_id, _claim, given) => {
      handed = given.parts.length;
      return { parts: given.parts.length };
    });
    expect(await run()).toMatchObject({ handedOff: { parts: plan.parts.length } });
    expect(handed).toBe(plan.parts.length);
    expect((await keys(scratchPrefix(jobId))).sort()).toEqual(
      [...plan.parts.map((p) => `${scratchPrefix(jobId)}in/${p.index}`), `${scratchPrefix(jobId)}in/audio`].sort(),
    );
  });

  it("a split the Worker refuses (the job was cancelled meanwhile) takes its pieces with it", async () => {
    const { run } = await splitWith(async () => {
      throw new JobGoneError("cancelled");
    });
    await expect(run()).rejects.toBeInstanceOf(JobGoneError);
    expect(await keys(scratchPrefix(jobId))).toEqual([]);
  });
});
