/**
 * The typed client and the vep CLI against the whole service with the real encoder: sources
 * generated with lavfi and served from this machine (the stack allows loopback sources).
 */
import { mkdtemp, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, createVepClient, verifyWebhook, WebhookVerificationError, type Job } from "../../client";
import { EXIT } from "../../cli/exit-codes";
import { vep } from "../support/cli";
import { ffmpeg, ffprobeJson } from "../support/media";
import { describeErrors, dereferencedDocument, schemaValidator, type Schema } from "../support/openapi";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { startE2E, type E2E } from "./harness";

let e2e: E2E;
let fixtures: FixtureServer;
let dir: string;
beforeAll(async () => {
  [e2e, fixtures, dir] = await Promise.all([
    startE2E({ allowLoopbackSources: true }),
    startFixtureServer(),
    mkdtemp(join(tmpdir(), "vep-e2e-")),
  ]);
});
afterAll(async () => {
  await e2e?.stop();
  await fixtures?.stop();
});

const api = () => e2e.stack.info.apiUrl;
const videoStream = (probe: { streams: { codec_type: string }[] }) =>
  probe.streams.find((s) => s.codec_type === "video") as Record<string, unknown> | undefined;

describe("client: a real job from creation to download", () => {
  it("waitForJob follows the encode to completion; the output downloads; the signed webhook verifies", async () => {
    const hooks = await startWebhookReceiver();
    try {
      const { accountId, key } = await e2e.client("free");
      const { secret } = await e2e.admin.setWebhook(accountId, hooks.url);
      const client = createVepClient({ baseUrl: api(), apiKey: key });
      const src = await fixtures.source("client.mp4", { seconds: 4, width: 640, height: 360 });

      const created = await client.createJob({ inputUrl: src, preset: "mp4_264_480p" });
      const reads: Job[] = [];
      const job = await client.waitForJob(created.id, { intervalMs: 250, onProgress: (j) => reads.push(j) });
      expect(job).toMatchObject({ status: "completed", errorMessage: null });
      expect(reads.at(-1)).toEqual(job);
      expect(reads.every((j) => j.progress === null || (j.progress >= 0 && j.progress <= 1))).toBe(true);

      const out = join(dir, "client.mp4");
      await writeFile(out, Buffer.from(await (await client.fetchOutput(job.id)).arrayBuffer()));
      expect(videoStream(await ffprobeJson(out))).toMatchObject({ codec_name: "h264", height: 480 });

      const hook = await hooks.waitFor(job.id);
      const event = verifyWebhook(hook.body, hook.headers, secret);
      expect(event).toMatchObject({
        event: "job.completed",
        jobId: job.id,
        status: "completed",
        preset: "mp4_264_480p",
      });
      expect((await fetch(event.outputUrl!)).status).toBe(200);
      // The payload is the one the OpenAPI document describes.
      const schema = (await dereferencedDocument()).components!.schemas!.WebhookEvent as Schema;
      const validate = schemaValidator()(schema);
      expect(validate(JSON.parse(hook.body)), describeErrors(validate)).toBe(true);
      // A body changed on the way, or another account's secret, does not verify.
      expect(() => verifyWebhook(hook.body.replace("completed", "failed"), hook.headers, secret)).toThrow(
        WebhookVerificationError,
      );
      const other = await e2e.admin.setWebhook((await e2e.client("free")).accountId, hooks.url);
      expect(() => verifyWebhook(hook.body, hook.headers, other.secret)).toThrow(WebhookVerificationError);
    } finally {
      await hooks.stop();
    }
  });

  it("a source that cannot be downloaded: waitForJob returns the failed job after the encoder's retries", async () => {
    const { key } = await e2e.client("free");
    const client = createVepClient({ baseUrl: api(), apiKey: key });
    const created = await client.createJob({
      inputUrl: fixtures.url("status/404/missing.mp4"),
      preset: "mp4_264_240p",
    });
    const job = await client.waitForJob(created.id, { intervalMs: 500 });
    expect(job.status).toBe("failed");
    expect(job.errorMessage).toBeTruthy();
    const err = await client.getDownloadUrl(job.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 400, error: undefined, retryable: false });
  });
});

describe("vep: encode and render end to end", () => {
  it("encode --wait --out writes a playable file; --json prints the finished job", async () => {
    const { key } = await e2e.client("free");
    const src = await fixtures.source("cli.mp4", { seconds: 3, width: 640, height: 360 });
    const out = join(dir, "cli-720p.mp4");
    const run = await vep(
      ["--json", "encode", src, "--preset", "mp4_264_720p", "--wait", "--out", out, "--interval", "0.5"],
      { api: api(), key },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ status: "completed", preset: "mp4_264_720p", inputUrl: src });
    const probe = await ffprobeJson(out);
    expect(videoStream(probe)).toMatchObject({ codec_name: "h264", width: 1280, height: 720 });
    expect(Number(probe.format.duration)).toBeCloseTo(3, 0);
  });

  it("the same without --json prints a readable summary and where it saved the file", async () => {
    const { key } = await e2e.client("free");
    const src = await fixtures.source("cli-text.mp4", { seconds: 2, width: 320, height: 240 });
    const out = join(dir, "cli-240p.mp4");
    const run = await vep(["encode", src, "--preset", "mp4_264_240p", "--out", out, "--interval", "0.5"], {
      api: api(),
      key,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^created job [0-9a-f-]{36} \(queued\), preset mp4_264_240p/);
    expect(run.stdout).toMatch(/status {6}completed/);
    expect(run.stdout).toMatch(new RegExp(`saved ${out} \\(\\d+ bytes\\)`));
    expect((await stat(out)).size).toBeGreaterThan(1000);
  });

  it("edl render --wait --out renders a timeline with a clip, a logo and a caption", async () => {
    const { key } = await e2e.client("pro");
    const clip = await fixtures.source("edl-clip.mp4", { seconds: 3, width: 640, height: 360 });
    await ffmpeg([
      "-y",
      "-f",
      "lavfi",
      "-i",
      "color=c=red:size=64x64",
      "-frames:v",
      "1",
      join(fixtures.dir, "logo.png"),
    ]);
    const edlFile = join(dir, "timeline.json");
    await writeFile(
      edlFile,
      JSON.stringify({
        version: "1.0",
        output: { resolution: "640x360", fps: 25 },
        timeline: {
          tracks: [
            { type: "video", clips: [{ id: "clip", src: clip, in: 0, out: 2, startTime: 0 }] },
            {
              type: "overlay",
              clips: [
                {
                  id: "logo",
                  src: fixtures.url("logo.png"),
                  startTime: 0,
                  duration: 2,
                  position: { x: "right", y: "top" },
                },
              ],
            },
            { type: "text", clips: [{ id: "title", text: "Hello", startTime: 0.5, duration: 1 }] },
          ],
        },
      }),
    );
    const out = join(dir, "timeline.mp4");
    const run = await vep(
      ["--json", "edl", "render", edlFile, "--wait", "--out", out, "--interval", "0.5", "--name", "cli timeline"],
      { api: api(), key },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({
      status: "completed",
      preset: "edl_custom",
      clientMetadata: { name: "cli timeline" },
    });
    const probe = await ffprobeJson(out);
    expect(videoStream(probe)).toMatchObject({ width: 640, height: 360 });
    expect(Number(probe.format.duration)).toBeCloseTo(2, 0);
  });

  it("a job that fails: exit 11 and its error message", async () => {
    const { key } = await e2e.client("free");
    const src = await fixtures.corrupt("corrupt.mp4");
    const run = await vep(["encode", src, "--preset", "mp4_264_240p", "--wait", "--interval", "0.5"], {
      api: api(),
      key,
    });
    expect(run.code).toBe(EXIT.jobFailed);
    expect(run.stderr.trim().split("\n").at(-1)).toMatch(/^vep: job [0-9a-f-]{36} failed: /);
  });
});
