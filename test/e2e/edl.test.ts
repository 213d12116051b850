import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeTo, pixelAt, volume } from "../support/frames";
import { ffmpeg, ffprobeJson } from "../support/media";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { startE2E, type E2E } from "./harness";

let e2e: E2E;
let fixtures: FixtureServer;
const FPS = 25;
const FRAME = 1 / FPS;

/** Solid-colour clips with a 440 Hz tone, a red PNG, and a 1 kHz tone for replaceAudio. */
async function makeAssets() {
  const dir = fixtures.dir;
  const clip = (name: string, colour: string, audio = true) =>
    ffmpeg([
      "-f", "lavfi", "-i", `color=c=${colour}:size=320x240:rate=${FPS}:duration=4`,
      ...(audio ? ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=4", "-ac", "2", "-c:a", "aac"] : []),
      "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", join(dir, name),
    ]);
  await Promise.all([
    clip("blue.mp4", "blue"),
    clip("green.mp4", "green"),
    clip("silent-green.mp4", "green", false),
    ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=100x100", "-frames:v", "1", join(dir, "red.png")]),
    ffmpeg(["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=4", "-ac", "2", "-c:a", "aac", join(dir, "tone1k.m4a")]),
  ]);
}

async function render(edl: unknown, plan: "free" | "pro" = "pro") {
  const c = await e2e.client(plan);
  const created = await c.call("POST", "/edl", { edl });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const job = await e2e.waitFor(c, created.body.id);
  return job;
}

async function download(job: any, ext: string) {
  expect(job.status, job.errorMessage).toBe("completed");
  const path = join(await mkdtemp(join(tmpdir(), "edl-")), `out.${ext}`);
  await writeFile(path, Buffer.from(await (await fetch(job.outputUrl)).arrayBuffer()));
  return path;
}

beforeAll(async () => {
  [e2e, fixtures] = await Promise.all([startE2E({ allowLoopbackSources: true }), startFixtureServer()]);
  await makeAssets();
});
afterAll(async () => {
  await e2e?.stop();
  await fixtures?.stop();
});

describe("spec: POST /edl › a timeline rendered end to end", () => {
  let out: string;
  beforeAll(async () => {
    const u = fixtures.url;
    const job = await render({
      version: "1.0",
      output: { resolution: "320x240", fps: FPS },
      timeline: {
        tracks: [
          {
            type: "video",
            clips: [
              { id: "intro", src: u("blue.mp4"), in: 0, out: 2, startTime: 0 },
              // a gap from 2 to 3
              { id: "fast", src: u("green.mp4"), in: 0, out: 4, startTime: 3, speed: 2, volume: 6 },
              { id: "muted", src: u("blue.mp4"), in: 0, out: 1, startTime: 5, mute: true },
              { id: "dubbed", src: u("silent-green.mp4"), in: 0, out: 1, startTime: 6, replaceAudio: u("tone1k.m4a") },
            ],
          },
          {
            type: "overlay",
            clips: [{ id: "logo", src: u("red.png"), startTime: 0.5, duration: 1, position: { x: 20, y: 20 }, size: { width: 40, height: 40 }, opacity: 0.5 }],
          },
          {
            type: "text",
            clips: [{ id: "caption", text: "Hi", startTime: 3.5, duration: 1, position: { x: 30, y: 30 }, fontSize: 24, fontColor: "#FFFFFF", background: { color: "#FFFFFF", opacity: 1, padding: 20 } }],
          },
        ],
      },
    });
    out = await download(job, "mp4");
  });

  it("lasts exactly to the timeline's end (speed 2.0 halved the 4 s clip), within one frame", async () => {
    const probe = await ffprobeJson(out);
    const video = probe.streams.find((s: any) => s.codec_type === "video");
    expect(Math.abs(Number(video.duration) - 7)).toBeLessThanOrEqual(FRAME + 0.001);
    expect(video).toMatchObject({ codec_name: "h264", width: 320, height: 240 });
    expect(probe.streams.find((s: any) => s.codec_type === "audio").codec_name).toBe("aac");
  });

  it("the overlay sits at its position at 50% opacity, only while it is on", async () => {
    expect(closeTo(await pixelAt(out, 0.2, 40, 40), [0, 0, 255])).toBe(true);
    expect(closeTo(await pixelAt(out, 1.0, 40, 40), [128, 0, 128], 32)).toBe(true);
    expect(closeTo(await pixelAt(out, 1.0, 100, 100), [0, 0, 255])).toBe(true);
  });

  it("the text box is drawn where the text is placed, while it is on", async () => {
    expect(closeTo(await pixelAt(out, 3.2, 15, 15), [0, 128, 0], 32)).toBe(true);
    expect(closeTo(await pixelAt(out, 4.0, 15, 15), [255, 255, 255])).toBe(true);
  });

  it("the gap is black and silent", async () => {
    expect(closeTo(await pixelAt(out, 2.5, 160, 120), [0, 0, 0], 16)).toBe(true);
    expect((await volume(out, 2.1, 0.8)).max).toBeLessThanOrEqual(-80);
  });

  it("a +6 dB clip is 6 ± 1 dB louder; a muted clip is silent", async () => {
    const plain = await volume(out, 0.2, 1.6);
    const louder = await volume(out, 3.2, 1.6);
    expect(louder.mean - plain.mean).toBeGreaterThanOrEqual(5);
    expect(louder.mean - plain.mean).toBeLessThanOrEqual(7);
    expect((await volume(out, 5.1, 0.8)).max).toBeLessThanOrEqual(-80);
  });

  it("replaceAudio replaces the clip's sound (a 1 kHz tone where the source had none)", async () => {
    const low = "lowpass=f=700,lowpass=f=700,lowpass=f=700";
    const high = "highpass=f=700,highpass=f=700,highpass=f=700";
    expect((await volume(out, 6.1, 0.8)).mean).toBeGreaterThan(-40);
    const dubbed = { low: await volume(out, 6.1, 0.8, low), high: await volume(out, 6.1, 0.8, high) };
    const original = { low: await volume(out, 0.2, 1.6, low), high: await volume(out, 0.2, 1.6, high) };
    // The dubbed clip's energy is above 700 Hz (1 kHz); the original clips' below it (440 Hz).
    expect(dubbed.high.mean - dubbed.low.mean).toBeGreaterThan(10);
    expect(original.low.mean - original.high.mean).toBeGreaterThan(10);
  });
});

describe("spec: EDL document › output settings", () => {
  it("webm with VP9 and Opus at the requested resolution and frame rate", async () => {
    const job = await render({
      version: "1.0",
      output: { container: "webm", videoCodec: "libvpx-vp9", audioCodec: "opus", resolution: "256x144", fps: 24, videoBitrate: "300k", audioBitrate: "64k" },
      timeline: { tracks: [{ type: "video", clips: [{ id: "only", src: fixtures.url("blue.mp4"), in: 0, out: 1.5, startTime: 0 }] }] },
    });
    const probe = await ffprobeJson(await download(job, "webm"));
    const video = probe.streams.find((s: any) => s.codec_type === "video");
    expect(video).toMatchObject({ codec_name: "vp9", width: 256, height: 144, avg_frame_rate: "24/1" });
    expect(probe.streams.find((s: any) => s.codec_type === "audio").codec_name).toBe("opus");
    expect(Math.abs(Number(probe.format.duration) - 1.5)).toBeLessThanOrEqual(1 / 24 + 0.03);
  });
});

describe("spec: Failures after acceptance › EDL assets", () => {
  it("a missing asset fails the job with an errorMessage naming the clip", async () => {
    const job = await render({
      version: "1.0",
      timeline: { tracks: [{ type: "video", clips: [{ id: "ghost-clip", src: fixtures.url("status/404/ghost.mp4"), in: 0, out: 1, startTime: 0 }] }] },
    });
    expect(job.status).toBe("failed");
    expect(job.errorMessage).toContain("ghost-clip");
  });

  it("a font family fontconfig does not have fails with a message naming the family", async () => {
    const job = await render({
      version: "1.0",
      timeline: {
        tracks: [
          { type: "video", clips: [{ id: "v", src: fixtures.url("blue.mp4"), in: 0, out: 1, startTime: 0 }] },
          { type: "text", clips: [{ id: "t", text: "x", startTime: 0, duration: 1, fontFamily: "Definitely Not A Font" }] },
        ],
      },
    });
    expect(job.status).toBe("failed");
    expect(job.errorMessage).toContain("Definitely Not A Font");
  });
});
