import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AwsClient } from "aws4fetch";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startS3Server } from "../../../dev/cloud/s3-server";
import { scratchPrefix, taskIndices } from "../../../domain/split";
import { probeSource } from "../../../encoder/ffmpeg/probe";
import { JobGoneError, type ClaimedJob, type InternalApi } from "../../../encoder/internal-api";
import { handOff } from "../../../encoder/jobs/split-jobs";
import type { RenderContext } from "../../../encoder/jobs/pipeline";
import { readSplitFacts } from "../../../encoder/split/facts";
import { planSplit, splittableRecipe } from "../../../encoder/split/plan";
import { createUploader } from "../../../encoder/upload/s3";
import type { HeadStart } from "../../../encoder/split/head-start";
import { type KeptScratch, keptScratch } from "../../../encoder/split/kept-scratch";
import { heldFfmpeg, running } from "../../support/held-ffmpeg";
import { ffprobeJson, makeSource } from "../../support/media";

/**
 * The split stage against the real local S3 server: what it stores, and that an attempt the
 * Worker does not take (the job cancelled meanwhile) leaves nothing under the job's scratch.
 */
let dir: string;
let s3: Awaited<ReturnType<typeof startS3Server>>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hand-off-"));
  s3 = await startS3Server({ host: "127.0.0.1", directory: join(dir, "s3"), bucket: "outputs" });
  await makeSource(join(dir, "source.mp4"), { seconds: 8, width: 320, height: 240 });
});
afterAll(async () => {
  await s3?.stop();
  await rm(dir, { recursive: true, force: true });
});

const aws = () =>
  new AwsClient({ accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, service: "s3", region: "auto" });

async function keys(prefix: string): Promise<string[]> {
  const res = await aws().fetch(`${s3.endpoint}/outputs?list-type=2&prefix=${encodeURIComponent(prefix)}`);
  return [...(await res.text()).matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1]);
}

async function stored(key: string): Promise<Buffer> {
  return Buffer.from(await (await aws().fetch(`${s3.endpoint}/outputs/${key}`)).arrayBuffer());
}

async function splitWith(
  split: InternalApi["split"],
  alongside?: RenderContext["alongside"],
  aborts = new AbortController(),
  kept?: KeptScratch,
) {
  const source = join(dir, "source.mp4");
  const probed = await probeSource(source);
  const { probe } = probed;
  const recipe = splittableRecipe("mp4_264_240p");
  if (!recipe || !probe.video) throw new Error("the source should split");
  const facts = await readSplitFacts(source, probed, {});
  const plan = facts && planSplit(probe, facts, { minSeconds: 4, partSeconds: 2 });
  if (!plan) throw new Error("no plan");
  const uploader = createUploader({ ...s3, region: "auto", bucket: "outputs" });
  const workDir = await mkdtemp(join(dir, "work-"));
  const ctx: RenderContext = {
    workDir,
    signal: aborts.signal,
    onProgress: () => undefined,
    onDuration: () => undefined,
    log: () => undefined,
    alongside,
  };
  // A job of its own per case: what one case leaves in the scratch is not the next one's.
  const job = { id: randomUUID(), claim: 1, preset: "mp4_264_240p" } as ClaimedJob;
  const api = { split } as InternalApi;
  return {
    jobId: job.id,
    plan,
    workDir,
    run: () => handOff({ api, uploader, kept }, job, ctx, { path: source, probe }, plan),
  };
}

describe("the split stage", () => {
  it("stores every input under the job's scratch, telling the Worker of each only once it is stored", async () => {
    const calls: { stored: number[]; present: string[] }[] = [];
    const { jobId, plan, run } = await splitWith(async (id, _claim, given, stored = []) => {
      calls.push({ stored: [...stored], present: await keys(scratchPrefix(id)) });
      return { parts: given.parts.length };
    });
    expect(await run()).toMatchObject({ handedOff: { parts: plan.parts.length } });
    const inputKey = (index: number) => `${scratchPrefix(jobId)}in/${index === plan.parts.length ? "audio" : index}`;
    // The plan goes over with the first input stored, before the last is: the tasks start meanwhile.
    expect(calls.length).toBeGreaterThan(1);
    expect(calls[0].stored.length).toBeLessThan(plan.parts.length + 1);
    for (const [i, call] of calls.entries()) {
      for (const index of call.stored) expect(call.present).toContain(inputKey(index));
      if (i > 0) expect(call.stored.slice(0, calls[i - 1].stored.length)).toEqual(calls[i - 1].stored);
    }
    expect(calls.at(-1)?.stored.sort((a, b) => a - b)).toEqual(taskIndices(plan));
    expect((await keys(scratchPrefix(jobId))).sort()).toEqual(taskIndices(plan).map(inputKey).sort());
  });

  it("a split the Worker refuses (the job was cancelled meanwhile) takes its pieces with it", async () => {
    const { jobId, run } = await splitWith(async () => {
      throw new JobGoneError("cancelled");
    });
    await expect(run()).rejects.toBeInstanceOf(JobGoneError);
    expect(await keys(scratchPrefix(jobId))).toEqual([]);
  });

  it("refused after it took the plan, the stage stops at once; its pieces go only when the job ended", async () => {
    for (const status of ["cancelled", "processing"]) {
      let calls = 0;
      const { jobId, plan, run } = await splitWith(async (_id, _claim, given) => {
        calls += 1;
        if (calls > 1) throw new JobGoneError(status);
        return { parts: given.parts.length };
      });
      await expect(run()).rejects.toBeInstanceOf(JobGoneError);
      expect(calls).toBe(2);
      const left = await keys(scratchPrefix(jobId));
      // Cancelled: a piece may have landed after the Worker deleted the job's scratch. Taken over
      // by another attempt (still processing): that attempt stores its own under the same keys.
      if (status === "cancelled") expect(left).toEqual([]);
      else expect(left.length).toBeGreaterThan(0);
      expect(left.length).toBeLessThan(taskIndices(plan).length);
    }
  });

  it("a stage that fails drops the pieces it kept on its disk, as it drops those it stored", async () => {
    const store = join(dir, "kept-pieces");
    const kept = await keptScratch(store);
    let calls = 0;
    let keptBeforeFailing: string[] = [];
    const { run } = await splitWith(
      async (_id, _claim, given) => {
        calls += 1;
        // Refused once some pieces are stored and kept.
        if (calls > 1) {
          keptBeforeFailing = await readdir(store);
          throw new JobGoneError("cancelled");
        }
        return { parts: given.parts.length };
      },
      undefined,
      undefined,
      kept,
    );
    await expect(run()).rejects.toBeInstanceOf(JobGoneError);
    expect(keptBeforeFailing.length, "pieces kept before the refusal").toBeGreaterThan(0);
    expect(await readdir(store)).toEqual([]);
  });

  it("with work able to run beside it, it keeps the first part's task: named in every call, started once with the dispatch the Worker answers, its encode begun from the piece on its disk", async () => {
    const keeps: (readonly number[] | undefined)[] = [];
    const besides: { delivery: unknown; headStart?: HeadStart }[] = [];
    const { jobId, plan, workDir, run } = await splitWith(
      async (_id, _claim, given, stored = [], keep) => {
        keeps.push(keep);
        // As the Worker answers: the kept task, while it waits for its claim.
        return {
          parts: given.parts.length,
          ...(keep?.every((k) => stored.includes(k)) ? { kept: keep.map((index) => ({ index, dispatch: 4 })) } : {}),
        };
      },
      (delivery, headStart) => besides.push({ delivery, headStart }),
    );
    expect(await run()).toMatchObject({ handedOff: { parts: plan.parts.length, audio: true } });
    expect(keeps.length).toBeGreaterThan(1);
    expect(keeps).toEqual(keeps.map(() => [0]));
    expect(besides).toEqual([{ delivery: { jobId, dispatch: 4, part: 0 }, headStart: expect.anything() }]);
    // The encode from the very piece another encoder would fetch, should the part be done again elsewhere.
    const local = await readFile(join(workDir, "pieces", "0.mkv"));
    expect(local.equals(await stored(`${scratchPrefix(jobId)}in/0`))).toBe(true);
    const stages: string[] = [];
    const out = await besides[0].headStart!.adopt({
      signal: new AbortController().signal,
      onProgress: () => undefined,
      log: (stage) => stages.push(stage.stage),
    });
    // Its stage lines from before the adoption too, so its delivery's log has the whole encode.
    expect(stages).toEqual(["ffmpeg-start", "ffmpeg-end"]);
    const counted = await ffprobeJson(out, ["-count_frames"]);
    expect(Number(counted.streams[0].nb_read_frames)).toBe(plan.parts[0].frameCount);
  });

  it("a first part the Worker does not keep for it (another encoder claimed it): the encode begun for it is stopped", async () => {
    // An FFmpeg that waits a minute before the kept part's encode, so the stage ends while it runs.
    const held = await heldFfmpeg(dir, "0.out.nut");
    const besides: unknown[] = [];
    const { plan, run } = await splitWith(
      async (_id, _claim, given) => {
        // The Worker answers once that FFmpeg is up: the stage cannot end before it has begun.
        await vi.waitFor(() => readFile(held.pidFile), { timeout: 10_000 });
        return { parts: given.parts.length };
      },
      (delivery) => besides.push(delivery),
    );
    const path = process.env.PATH;
    process.env.PATH = held.path;
    try {
      expect(await run()).toMatchObject({ handedOff: { parts: plan.parts.length } });
    } finally {
      process.env.PATH = path;
    }
    expect(besides).toEqual([]);
    const pid = await held.pid();
    try {
      await vi.waitFor(() => expect(running(pid)).toBe(false), { timeout: 5_000 });
    } finally {
      if (running(pid)) process.kill(pid, "SIGKILL");
    }
  });

  it("the job's heartbeat refused once every input is told (the Worker refuses it from then on): the hand-off stands", async () => {
    const aborts = new AbortController();
    let all = 0;
    const { plan, run } = await splitWith(
      async (_id, _claim, given, stored = []) => {
        // The beat that lands between the last call's answer and the stage's end.
        if (stored.length === all) aborts.abort(new JobGoneError("processing"));
        return { parts: given.parts.length };
      },
      undefined,
      aborts,
    );
    all = taskIndices(plan).length;
    expect(await run()).toMatchObject({ handedOff: { parts: plan.parts.length } });
  });
});
