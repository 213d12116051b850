import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ffprobeJson } from "../support/media";
import { expectStatus } from "../support/api-client";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { startE2E, type E2E } from "./harness";

let e2e: E2E;
let fixtures: FixtureServer;
beforeAll(async () => {
  [e2e, fixtures] = await Promise.all([startE2E({ allowLoopbackSources: true }), startFixtureServer()]);
});
afterAll(async () => {
  await e2e?.stop();
  await fixtures?.stop();
});

describe("thin slice: one preset through the encoder to a downloaded file", () => {
  it("mp4_264_720p completes and its signed link downloads an H.264 720p MP4", async () => {
    const src = await fixtures.source("slice.mp4", { seconds: 3, width: 640, height: 360 });
    const c = await e2e.client("free");
    const created = await c.createJob({ inputUrl: src, preset: "mp4_264_720p" });
    expectStatus(created, 201);
    const job = await e2e.waitFor(c, created.body.id);
    expect(job).toMatchObject({ status: "completed", errorMessage: null, retryCount: 0 });
    expect(job.duration).toBeCloseTo(3, 1);
    const res = await fetch(job.outputUrl!);
    expect(res.status).toBe(200);
    const path = join(await mkdtemp(join(tmpdir(), "dl-")), "out.mp4");
    await writeFile(path, Buffer.from(await res.arrayBuffer()));
    const probe = await ffprobeJson(path);
    const video = probe.streams.find((s) => s.codec_type === "video")!;
    expect(video.codec_name).toBe("h264");
  });
});
