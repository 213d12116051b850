import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";
import { promisify } from "node:util";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { bodyOf, expectStatus } from "../support/api-client";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { startE2E, type E2E } from "./harness";
import type { WebhookEvent } from "../../client";

const exec = promisify(execFile);
let e2e: E2E;
let fixtures: FixtureServer;
let short: string;
let long: string;

/** Pids of the FFmpeg processes whose arguments mention this job (its work dir carries the job id). */
async function ffmpegPids(jobId: string): Promise<string[]> {
  const { stdout } = await exec("pgrep", ["-f", `ffmpeg.*job-${jobId}`]).catch(() => ({ stdout: "" }));
  return stdout.split("\n").filter(Boolean);
}
const ffmpegFor = async (jobId: string) => (await ffmpegPids(jobId)).length;

async function workDirsFor(jobId: string) {
  return (await readdir(e2e.workDir)).filter((d) => d.startsWith(`job-${jobId}`));
}

beforeAll(async () => {
  [e2e, fixtures] = await Promise.all([startE2E({ allowLoopbackSources: true }), startFixtureServer()]);
  [short, long] = await Promise.all([
    fixtures.source("short.mp4", { seconds: 4, width: 640, height: 360 }),
    fixtures.source("long.mp4", { seconds: 40, width: 1280, height: 720 }),
  ]);
});
afterAll(async () => {
  await e2e?.stop();
  await fixtures?.stop();
});

describe("contract §8.3 Failures after acceptance", () => {
  it("DURATION_EXCEEDED: fails at once, names both durations, is not retried, and still costs its unit", async () => {
    const src = await fixtures.long("eleven-minutes.mp4", 660);
    const c = await e2e.client("free");
    const created = await c.createJob({ inputUrl: src, preset: "mp4_264_240p" });
    expectStatus(created, 201);
    const job = await e2e.waitFor(c, created.body.id);
    expect(job.status).toBe("failed");
    expect(job.errorMessage).toMatch(/^DURATION_EXCEEDED/);
    expect(job.errorMessage).toContain("660.0 s");
    expect(job.errorMessage).toContain("600 s");
    expect(job.retryCount).toBe(0);
    expect(job.duration).toBeCloseTo(660, 0);
    expect(fixtures.hits("/eleven-minutes.mp4")).toBe(1);
    const next = await c.createJob({ inputUrl: short, preset: "mp4_264_240p" });
    expectStatus(next, 201);
    expect(next.body.user.remainingJobs).toBe(8);
  });

  it("an unreachable source: 3 attempts, then failed with retryCount 2 and download wording", async () => {
    const c = await e2e.client();
    const created = await c.createJob({ inputUrl: fixtures.url("status/503/source.mp4"), preset: "mp4_264_240p" });
    expectStatus(created, 201);
    const job = await e2e.waitFor(c, created.body.id);
    expect(job).toMatchObject({ status: "failed", retryCount: 2 });
    expect(job.errorMessage).toBe("Download failed: the source answered HTTP 503");
    expect(fixtures.hits("/status/503/source.mp4")).toBe(3);
  });

  it("a corrupt source: FFmpeg wording, retried, no stack traces or internal paths", async () => {
    const src = await fixtures.corrupt("corrupt.mp4");
    const c = await e2e.client();
    const created = await c.createJob({ inputUrl: src, preset: "mp4_264_240p" });
    expectStatus(created, 201);
    const job = await e2e.waitFor(c, created.body.id);
    expect(job).toMatchObject({ status: "failed", retryCount: 2 });
    expect(job.errorMessage).toMatch(/ffmpeg|ffprobe|decode|invalid data/i);
    expect(job.errorMessage).not.toMatch(/\/tmp|encoder-work|job-|at \w+ \(/);
    expect(fixtures.hits("/corrupt.mp4")).toBe(3);
  });
});

describe("contract §4 States and transitions › cancel", () => {
  it("cancel while processing (the job showing its source's duration): FFmpeg is killed within 5 s, temp files go, the job never completes", async () => {
    const c = await e2e.client();
    const created = await c.createJob({ inputUrl: long, preset: "mp4_264_1080p" });
    expectStatus(created, 201);
    const id = created.body.id;
    const running = await e2e.waitFor(c, id, (j) => j.status === "processing" && (j.progress ?? 0) > 0.05);
    // Measured during processing: the beat that carries the encode's progress carries the probed duration.
    expect(running.duration).toBeCloseTo(40, 0);
    expect(await ffmpegFor(id)).toBeGreaterThan(0);
    const cancel = await c.cancelJob(id);
    expectStatus(cancel, 200);
    expect(cancel.body.message).toMatch(/stop shortly/);
    await vi.waitFor(async () => expect(await ffmpegFor(id)).toBe(0), { timeout: 5000, interval: 100 });
    await vi.waitFor(async () => expect(await workDirsFor(id)).toEqual([]), { timeout: 10_000, interval: 100 });
    const job = await c.getJob(id);
    expectStatus(job, 200);
    expect(job.body).toMatchObject({ status: "cancelled", outputUrl: null });
  });

  it("cancel while queued: the job never starts", async () => {
    const c = await e2e.client();
    const busy = [];
    for (let i = 0; i < 2; i++)
      busy.push(bodyOf(await c.createJob({ inputUrl: long, preset: "mp4_264_720p" }), 201).id);
    const waiting = bodyOf(await c.createJob({ inputUrl: short, preset: "mp4_264_240p" }), 201).id;
    await e2e.waitFor(c, busy[1], (j) => j.status === "processing");
    const cancel = await c.cancelJob(waiting);
    expectStatus(cancel, 200);
    expect(cancel.body.message).toMatch(/cancelled successfully/i);
    for (const id of busy) await c.cancelJob(id);
    // Deliveries go first in, first out: once a job submitted after it has run, the cancelled one's turn has passed.
    const later = bodyOf(await c.createJob({ inputUrl: short, preset: "mp4_264_240p" }), 201).id;
    expect((await e2e.waitFor(c, later)).status).toBe("completed");
    const job = await c.getJob(waiting);
    expectStatus(job, 200);
    expect(job.body).toMatchObject({ status: "cancelled" });
    expect(job.body.metadata.startedAt).toBeNull();
  });
});

describe("contract §9.1 Limits › worker concurrency", () => {
  it("five jobs submitted at once: never more than two processing, the rest wait queued", async () => {
    const c = await e2e.client();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(bodyOf(await c.createJob({ inputUrl: short, preset: "mp4_264_720p" }), 201).id);
    let maxProcessing = 0;
    let sawQueuedWhileTwoRan = false;
    // Sampled every 100 ms until all five have completed.
    const mine = await vi.waitFor(
      async () => {
        const sample = bodyOf(await c.listJobs("limit=100"), 200).jobs.filter((j) => ids.includes(j.id));
        const processing = sample.filter((j) => j.status === "processing").length;
        maxProcessing = Math.max(maxProcessing, processing);
        if (processing === 2 && sample.some((j) => j.status === "queued")) sawQueuedWhileTwoRan = true;
        if (!sample.every((j) => j.status === "completed"))
          throw new Error(`${sample.filter((j) => j.status !== "completed").length} jobs not completed yet`);
        return sample;
      },
      { timeout: 240_000, interval: 100 },
    );
    // Interval check as well: at no instant did three encodes overlap.
    const spans = mine.map((j) => [Date.parse(j.startedAt!), Date.parse(j.completedAt!)]);
    for (const [start] of spans) {
      expect(spans.filter(([s, e]) => s <= start && start < e).length).toBeLessThanOrEqual(2);
    }
    expect(maxProcessing).toBe(2);
    expect(sawQueuedWhileTwoRan).toBe(true);
  });
});

describe("contract §7 Events › webhooks", () => {
  it("completed and failed jobs POST a Standard Webhooks–signed payload whose outputUrl downloads directly", async () => {
    const hooks = await startWebhookReceiver();
    const c = await e2e.client();
    const { secret } = await e2e.admin.setWebhook(c.accountId, hooks.url);
    const ok = bodyOf(await c.createJob({ inputUrl: short, preset: "mp4_264_240p" }), 201).id;
    const bad = bodyOf(
      await c.createJob({ inputUrl: fixtures.url("status/404/nothing.mp4"), preset: "mp4_264_240p" }),
      201,
    ).id;
    await e2e.waitFor(c, ok);
    await e2e.waitFor(c, bad);
    const verified = async (jobId: string) => {
      const hook = await hooks.waitFor(jobId);
      return new Webhook(secret).verify(hook.body, hook.headers) as WebhookEvent;
    };
    const completed = await verified(ok);
    const failed = await verified(bad);
    expect(completed).toMatchObject({ event: "job.completed", status: "completed" });
    expect((await fetch(completed.outputUrl!)).status).toBe(200);
    expect(failed).toMatchObject({ event: "job.failed", status: "failed", outputUrl: null });
    expect(failed.errorMessage).toMatch(/HTTP 404/);
    await hooks.stop();
  });
});
