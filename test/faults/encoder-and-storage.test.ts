import { execFile } from "node:child_process";
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { AwsClient } from "aws4fetch";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FixtureServer } from "../e2e/fixtures";
import { expectStatus } from "../support/api-client";
import type { Client, E2E } from "../e2e/harness";
import type { Job } from "../../client";
import { ffprobeJson } from "../support/media";
import { startFaultStack, type FaultStack } from "./stack";
import {
  expectOneUnitPerJob,
  expectOneWebhookPerFinalState,
  startStorageFront,
  type IdempotentReceiver,
} from "./support";

const exec = promisify(execFile);

/**
 * The service while its parts fail: the encoder killed mid-job, storage answering 503 or
 * dropping connections. Every job ends completed or failed, never stuck; a completed job's
 * output is whole, a failed one left none; and across them all (below, last) no quota unit is
 * counted twice and an idempotent webhook receiver, which refuses each first delivery with a
 * 500, sees exactly one webhook per final state.
 */
let stack: FaultStack;
let e2e: E2E;
let fixtures: FixtureServer;
let front: Awaited<ReturnType<typeof startStorageFront>>;
let receiver: IdempotentReceiver;
let client: Client;
let secret: string;
const created: string[] = [];

beforeAll(async () => {
  front = await startStorageFront();
  // The encoder reaches storage only through the front; the Worker (presigned links) directly.
  stack = await startFaultStack({ env: { S3_ENDPOINT: front.endpoint } }, (info) =>
    front.forwardTo(info.cloud.s3.endpoint),
  );
  ({ e2e, fixtures, receiver, client, secret } = stack);
  await Promise.all([
    fixtures.source("short.mp4", { seconds: 2, width: 320, height: 240 }),
    fixtures.source("long.mp4", { seconds: 20, width: 640, height: 360 }),
  ]);
});
afterAll(async () => {
  await stack?.stop();
  await front?.stop();
});

async function createJob(source: string) {
  const res = await client.createJob({ inputUrl: fixtures.url(source), preset: "mp4_264_240p" });
  expectStatus(res, 201);
  created.push(res.body.id);
  return res.body.id as string;
}

const stageLines = (jobId: string) => stack.stageLines(jobId);
const supervisorLines = () => stack.logs.filter((l) => l.source === "supervisor").map((l) => l.line);

async function ffmpegPids(jobId: string): Promise<string[]> {
  const { stdout } = await exec("pgrep", ["-f", `ffmpeg.*job-${jobId}`]).catch(() => ({ stdout: "" }));
  return stdout.split("\n").filter(Boolean);
}

const workDirsFor = async (jobId: string) => (await readdir(e2e.workDir)).filter((d) => d.includes(jobId));

/** The objects storage holds under the job's output prefix, asked of the S3 server directly. */
async function storedOutputs(jobId: string): Promise<string[]> {
  const { s3 } = e2e.stack.info.cloud;
  const aws = new AwsClient({
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    service: "s3",
    region: s3.region,
  });
  const res = await aws.fetch(
    `${s3.endpoint}/${s3.bucket}?list-type=2&prefix=${encodeURIComponent(`outputs/${client.accountId}/${jobId}/`)}`,
  );
  return [...(await res.text()).matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1]);
}

/** Completed, its one output downloads whole through the signed link and plays as the source's 2 s. */
async function expectWholeOutput(job: Job) {
  expect(job.status, job.errorMessage ?? undefined).toBe("completed");
  expect(await storedOutputs(job.id)).toEqual([`outputs/${client.accountId}/${job.id}/mp4_264_240p.mp4`]);
  const path = join(fixtures.dir, `${job.id}.mp4`);
  await writeFile(path, Buffer.from(await (await fetch(job.outputUrl!)).arrayBuffer()));
  expect(Number((await ffprobeJson(path)).format.duration)).toBeCloseTo(2, 0);
}

describe("the encoder killed mid-job", () => {
  it("kill -9 while FFmpeg encodes: reported, restarted by its supervisor, its orphaned FFmpeg killed; the job is redelivered and completes; no temp files", async () => {
    const id = await createJob("long.mp4");
    const orphans = await vi.waitFor(
      async () => {
        const pids = await ffmpegPids(id);
        if (pids.length === 0) throw new Error("FFmpeg has not started");
        return pids;
      },
      { timeout: 60_000, interval: 100 },
    );
    const pid = e2e.stack.encoderPid()!;
    process.kill(pid, "SIGKILL");
    await e2e.stack.encoderReadyAfter(pid);
    const next = e2e.stack.encoderPid()!;

    // The new encoder kills what the old one left encoding before it serves.
    expect((await ffmpegPids(id)).filter((p) => orphans.includes(p))).toEqual([]);
    const job = await e2e.waitFor(client, id, undefined, 240_000);
    expect(job.status).toBe("completed");
    // The encoder's crash is ours, not the source's: the new claim is attempt 1 of 3 again.
    expect(job.retryCount).toBe(0);
    expect(stageLines(id).filter((l) => l.startsWith("claim "))).toEqual([
      expect.stringMatching(/attempt 1 of 3/),
      expect.stringMatching(/attempt 1 of 3/),
    ]);
    await vi.waitFor(async () => expect(await workDirsFor(id)).toEqual([]));

    expect(e2e.stack.encoderCrashes()).toEqual([expect.objectContaining({ pid, signal: "SIGKILL", code: null })]);
    expect(supervisorLines()).toContainEqual(
      expect.stringMatching(new RegExp(`^ENCODER CRASHED: pid ${pid} was killed by SIGKILL after \\d+\\.\\d s\\.$`)),
    );
    expect(supervisorLines()).toContainEqual(
      expect.stringMatching(/restarting it on port \d+ now; QStash delivers the jobs it had in flight again\.$/),
    );
    expect(supervisorLines()).toContainEqual(
      expect.stringMatching(new RegExp(`^encoder restarted: pid ${next} is answering`)),
    );
    // The redelivered attempt is logged by the new encoder through to completion.
    expect(stageLines(id).filter((l) => /^claim /.test(l)).length).toBeGreaterThanOrEqual(2);
    expect(stageLines(id).at(-1)).toMatch(/completed +on encoder-1 {2}in /);
  });
});

describe("storage refusing uploads", () => {
  it("503 SlowDown for a while: the upload is retried within the attempt, and the job completes with its output whole", async () => {
    front.set("answer503");
    const id = await createJob("short.mp4");
    await vi.waitFor(() => expect(front.refused().answer503).toBeGreaterThanOrEqual(3), {
      timeout: 60_000,
      interval: 50,
    });
    front.set("pass");
    const job = await e2e.waitFor(client, id);
    expect(job.retryCount).toBe(0);
    await expectWholeOutput(job);
  });

  it("connections dropped through a whole attempt: that attempt fails with the upload's reason, the next one completes", async () => {
    front.set("close");
    const id = await createJob("short.mp4");
    await vi.waitFor(
      () => expect(stageLines(id).some((l) => /^failed .*will be retried: Upload failed/.test(l))).toBe(true),
      {
        timeout: 60_000,
        interval: 50,
      },
    );
    front.set("pass");
    const job = await e2e.waitFor(client, id);
    expect(job.retryCount).toBe(1);
    await expectWholeOutput(job);
    await vi.waitFor(async () => expect(await workDirsFor(id)).toEqual([]));
  });

  it("connections dropped for good: three attempts, then failed with the upload's reason; nothing left in storage or the work dir", async () => {
    front.set("close");
    const id = await createJob("short.mp4");
    const job = await e2e.waitFor(client, id);
    front.set("pass");
    expect(job).toMatchObject({ status: "failed", retryCount: 2, outputUrl: null });
    expect(job.errorMessage).toMatch(/^Upload failed: the output could not be sent to storage \(E[A-Z]+\)$/);
    expect(await storedOutputs(id)).toEqual([]);
    expect((await client.getDownloadUrl(id)).status).toBe(400);
    await vi.waitFor(async () => expect(await workDirsFor(id)).toEqual([]));
  });
});

describe("across every fault above", () => {
  it("every job ended; no quota unit counted twice; the idempotent receiver accepted one webhook per final state, after a 500, under one webhook-id", async () => {
    const jobs = await Promise.all(created.map((id) => e2e.waitFor(client, id)));
    expect(jobs.map((j) => j.status)).toEqual(["completed", "completed", "completed", "failed"]);
    await expectOneUnitPerJob(e2e.stack.info.databaseUrl, client.accountId, created.length);
    await vi.waitFor(() => expect(receiver.accepted().size).toBe(jobs.length), { timeout: 60_000, interval: 250 });
    expectOneWebhookPerFinalState(receiver, secret, jobs);
  });
});
