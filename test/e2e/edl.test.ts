import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COUNTER_DB_PER_SECOND, COUNTER_GRID, makeCounterSource, readCounter } from "../support/counter";
import { fakeDnsEnv } from "../support/fake-dns";
import {
  closeTo,
  decodedAudioSeconds,
  everyFrame,
  frameAt,
  largestAudioHole,
  pixelAt,
  volume,
  type Frame,
  type Rgb,
} from "../support/frames";
import { ffmpeg, ffprobeJson } from "../support/media";
import { expectStatus, unchecked } from "../support/api-client";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { startE2E, type E2E } from "./harness";
import type { Job } from "../../client";

let e2e: E2E;
let fixtures: FixtureServer;
const FPS = 25;
const FRAME = 1 / FPS;
/** One AAC frame at 48 kHz: the finest step an AAC stream's length can take. */
const AAC_FRAME = 1024 / 48000;
/** A hostname under a reserved TLD that the encoder's (stand-in) DNS resolves to a private address. */
const PRIVATE_HOST = "assets.internal.test";

/**
 * Solid-colour clips with a 440 Hz tone, a red PNG, a 1 kHz tone for replaceAudio, a clip whose
 * audio (1 s) is shorter than its video (3 s), and the frame/time counter (test/support/counter).
 */
async function makeAssets() {
  const dir = fixtures.dir;
  const clip = (name: string, colour: string, audio = true) =>
    ffmpeg([
      "-f",
      "lavfi",
      "-i",
      `color=c=${colour}:size=320x240:rate=${FPS}:duration=4`,
      ...(audio
        ? ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=4", "-ac", "2", "-c:a", "aac"]
        : []),
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-pix_fmt",
      "yuv420p",
      join(dir, name),
    ]);
  await Promise.all([
    clip("blue.mp4", "blue"),
    clip("green.mp4", "green"),
    clip("silent-green.mp4", "green", false),
    ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=100x100", "-frames:v", "1", join(dir, "red.png")]),
    ffmpeg([
      "-f",
      "lavfi",
      "-i",
      "sine=frequency=1000:sample_rate=48000:duration=4",
      "-ac",
      "2",
      "-c:a",
      "aac",
      join(dir, "tone1k.m4a"),
    ]),
    ffmpeg([
      "-f",
      "lavfi",
      "-i",
      `color=c=yellow:size=320x240:rate=${FPS}:duration=3`,
      "-f",
      "lavfi",
      "-i",
      "sine=frequency=440:sample_rate=48000:duration=1",
      "-ac",
      "2",
      "-c:a",
      "aac",
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-pix_fmt",
      "yuv420p",
      join(dir, "short-audio.mp4"),
    ]),
    makeCounterSource(join(dir, "counter.mp4"), { seconds: 6, fps: FPS }),
  ]);
}

async function render(edl: unknown, plan: "free" | "pro" = "pro") {
  const c = await e2e.client(plan);
  const created = await c.createEdlJob(unchecked({ edl }));
  expectStatus(created, 201, JSON.stringify(created.body));
  const job = await e2e.waitFor(c, created.body.id);
  return job;
}

async function download(job: Job, ext: string) {
  expect(job.status, job.errorMessage ?? undefined).toBe("completed");
  const path = join(await mkdtemp(join(tmpdir(), "edl-")), `out.${ext}`);
  await writeFile(path, Buffer.from(await (await fetch(job.outputUrl!)).arrayBuffer()));
  return path;
}

beforeAll(async () => {
  // Development settings (loopback allowed, for the fixture server), with a DNS stand-in under
  // which PRIVATE_HOST resolves to 10.1.2.3: the source guard must still refuse it.
  [e2e, fixtures] = await Promise.all([
    startE2E({ allowLoopbackSources: true, env: fakeDnsEnv({ [PRIVATE_HOST]: "10.1.2.3" }) }),
    startFixtureServer(),
  ]);
  await makeAssets();
});
afterAll(async () => {
  await e2e?.stop();
  await fixtures?.stop();
});

/** A rectangle of pixels: x in [x, x + width), y in [y, y + height). */
interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Pixels `margin` px inside the middle of each edge, and `margin` px outside it; the corners
 * `margin + 2` px in (x264 rings a little more where two edges meet); and the centre.
 */
function edgeProbes(r: Rect, margin = 3) {
  const inset = (m: number) => ({
    left: r.x + m,
    right: r.x + r.width - 1 - m,
    top: r.y + m,
    bottom: r.y + r.height - 1 - m,
  });
  const e = inset(margin);
  const c = inset(margin + 2);
  const cx = r.x + Math.floor(r.width / 2);
  const cy = r.y + Math.floor(r.height / 2);
  return {
    centre: [cx, cy] as [number, number],
    inside: [
      [e.left, cy],
      [e.right, cy],
      [cx, e.top],
      [cx, e.bottom],
      [c.left, c.top],
      [c.right, c.top],
      [c.left, c.bottom],
      [c.right, c.bottom],
    ] as [number, number][],
    outside: [
      [r.x - 1 - margin, cy],
      [r.x + r.width + margin, cy],
      [cx, r.y - 1 - margin],
      [cx, r.y + r.height + margin],
    ] as [number, number][],
  };
}

/** Pixels of `frame` at `points` that are not within `tolerance` of `expected`, for a readable failure. */
function offColour(frame: Frame, points: [number, number][], expected: Rgb, tolerance = 24) {
  return points.map(([x, y]) => ({ x, y, rgb: frame.pixel(x, y) })).filter((p) => !closeTo(p.rgb, expected, tolerance));
}

const BLUE: Rgb = [0, 0, 255];
const GREEN: Rgb = [0, 128, 0];
const RED: Rgb = [255, 0, 0];
const WHITE: Rgb = [255, 255, 255];
const blend = (fg: Rgb, bg: Rgb, alpha: number): Rgb => fg.map((v, i) => alpha * v + (1 - alpha) * bg[i]) as Rgb;

describe("contract §5.6 POST /edl › a timeline rendered end to end", () => {
  let out: string;
  /** The logo: red, 40x40 at (20, 20), opacity 0.5, on the blue intro from 0.5 s to 1.5 s. */
  const LOGO: Rect = { x: 20, y: 20, width: 40, height: 40 };
  /**
   * The caption: "Hi" at 24 px, centred on x = 60 (textAlign center: a numeric x is the centre),
   * top at y = 30, with 20 px of box padding. Arial resolves to Liberation Sans (Arial's metric
   * twin): the text is 22 px wide ("H" 0.722 em + "i" 0.222 em of 24 px) and 17 px tall (cap
   * height 0.716 em), so it spans x 49–70 and y 30–46, and the box x 29–90 and y 10–66.
   */
  const BOX: Rect = { x: 29, y: 10, width: 62, height: 57 };
  /** Where the glyphs' ink can be: the text's own extent, with 2 px for antialiasing. */
  const INK: Rect = { x: 47, y: 28, width: 26, height: 21 };

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
            clips: [
              {
                id: "logo",
                src: u("red.png"),
                startTime: 0.5,
                duration: 1,
                position: { x: LOGO.x, y: LOGO.y },
                size: { width: LOGO.width, height: LOGO.height },
                opacity: 0.5,
              },
            ],
          },
          {
            type: "text",
            clips: [
              {
                id: "caption",
                text: "Hi",
                startTime: 3.5,
                duration: 1,
                position: { x: 60, y: 30 },
                textAlign: "center",
                fontSize: 24,
                fontColor: "#000000",
                background: { color: "#FFFFFF", opacity: 1, padding: 20 },
              },
            ],
          },
        ],
      },
    });
    out = await download(job, "mp4");
  });

  it("video and audio both last exactly to the timeline's end (7 s): video within a frame, audio within an AAC frame", async () => {
    const probe = await ffprobeJson(out);
    const video = probe.streams.find((s) => s.codec_type === "video")!;
    const audio = probe.streams.find((s) => s.codec_type === "audio")!;
    expect(Math.abs(Number(video.duration) - 7)).toBeLessThanOrEqual(FRAME + 0.001);
    expect(video).toMatchObject({ codec_name: "h264", width: 320, height: 240 });
    expect(audio.codec_name).toBe("aac");
    expect(Math.abs(Number(audio.duration) - 7), `audio stream duration ${audio.duration}`).toBeLessThanOrEqual(
      AAC_FRAME + 0.001,
    );
    const decoded = await decodedAudioSeconds(out);
    expect(Math.abs(decoded - 7), `decoded audio ${decoded} s`).toBeLessThanOrEqual(AAC_FRAME + 0.001);
  });

  it("the overlay covers exactly its rectangle at 50% opacity (red over blue), only while it is on", async () => {
    const probes = edgeProbes(LOGO);
    const on = await frameAt(out, 1.0);
    // Opacity 0.5 of red over blue: (127.5, 0, 127.5); ±10 per channel is opacity 0.5 ± 0.04.
    const expected = blend(RED, BLUE, 0.5);
    expect(offColour(on, [probes.centre, ...probes.inside], expected, 10)).toEqual([]);
    expect(offColour(on, probes.outside, BLUE, 12)).toEqual([]);
    expect(
      offColour(
        on,
        [
          [100, 100],
          [LOGO.x + LOGO.width + 40, LOGO.y],
        ],
        BLUE,
        12,
      ),
    ).toEqual([]);
    for (const t of [0.2, 1.8]) {
      const off = await frameAt(out, t);
      expect(offColour(off, probes.inside, BLUE, 12), `at ${t} s`).toEqual([]);
    }
  });

  it("the text box covers its expected extent and no more, with the text's ink inside it, only while it is on", async () => {
    const probes = edgeProbes(BOX);
    const on = await frameAt(out, 4.0);
    expect(offColour(on, probes.inside, WHITE, 16)).toEqual([]);
    expect(offColour(on, probes.outside, GREEN)).toEqual([]);
    // Black glyphs on the white box: ink inside the text's extent, none elsewhere in the box
    // (scanned 3 px in from its edges, where 4:2:0 chroma blends the box with the green).
    let inkInside = 0;
    const inkOutside: [number, number][] = [];
    for (let y = BOX.y + 3; y < BOX.y + BOX.height - 3; y++) {
      for (let x = BOX.x + 3; x < BOX.x + BOX.width - 3; x++) {
        if (!on.pixel(x, y).every((v) => v < 100)) continue;
        const inInk = x >= INK.x && x < INK.x + INK.width && y >= INK.y && y < INK.y + INK.height;
        if (inInk) inkInside++;
        else inkOutside.push([x, y]);
      }
    }
    expect(inkInside).toBeGreaterThanOrEqual(40);
    expect(inkOutside).toEqual([]);
    for (const t of [3.2, 4.8]) {
      const off = await frameAt(out, t);
      expect(offColour(off, [...probes.inside, [INK.x + 4, INK.y + 8]], GREEN), `at ${t} s`).toEqual([]);
    }
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

/**
 * Clips whose content says which source moment is playing (the counter source), plus a source
 * without audio and one whose audio stops before its video:
 *   [0, 1) "before"      counter  in 0 → 1, speed 1
 *   [1, 3) "fast"        counter  in 1 → 5, speed 2 (4 s of source in 2 s)
 *   [3, 4) "no-audio"    silent-green.mp4 (no audio stream, no replaceAudio)
 *   [4, 6) "short-audio" short-audio.mp4: yellow for 3 s, a 440 Hz tone for only 1 s
 *   [6, 7) "after"       blue.mp4 with its 440 Hz tone
 */
describe("contract §5.6 POST /edl › speed, and sources with missing or short audio, measured on content", () => {
  let out: string;
  const END = 7;

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
              { id: "before", src: u("counter.mp4"), in: 0, out: 1, startTime: 0 },
              { id: "fast", src: u("counter.mp4"), in: 1, out: 5, startTime: 1, speed: 2 },
              { id: "no-audio", src: u("silent-green.mp4"), in: 0, out: 1, startTime: 3 },
              { id: "short-audio", src: u("short-audio.mp4"), in: 0, out: 2, startTime: 4 },
              { id: "after", src: u("blue.mp4"), in: 0, out: 1, startTime: 6 },
            ],
          },
        ],
      },
    });
    out = await download(job, "mp4");
  });

  it("every output frame shows the right source moment: at offset t into the speed-2 clip, source time in + 2t; the clip fills exactly half its 4 s span", async () => {
    const frames = await everyFrame(out, COUNTER_GRID.cols, COUNTER_GRID.rows);
    expect(frames.length).toBe(END * FPS);
    const wrong: string[] = [];
    const colourOf = (cells: Rgb[][]) => cells[2][0];
    frames.forEach(({ time, cells }, i) => {
      if (Math.abs(time - i * FRAME) > 0.002) wrong.push(`frame ${i} at ${time} s, not ${i * FRAME}`);
      const shown = readCounter(cells);
      const t = i * FRAME;
      if (t < 1 - 1e-9) {
        // speed 1 from in 0: source frame i
        if (shown === null || Math.abs(shown - i) > 1)
          wrong.push(`${t.toFixed(2)} s: counter ${shown}, expected source frame ${i}`);
      } else if (t < 3 - 1e-9) {
        // speed 2 from in 1: source time 1 + 2 (t - 1), i.e. every other source frame
        const expected = (1 + 2 * (t - 1)) * FPS;
        if (shown === null || Math.abs(shown - expected) > 1)
          wrong.push(`${t.toFixed(2)} s: counter ${shown}, expected source frame ${expected.toFixed(1)}`);
      } else {
        const colour = t < 4 - 1e-9 ? GREEN : t < 6 - 1e-9 ? ([255, 255, 0] as Rgb) : BLUE;
        if (shown !== null || !closeTo(colourOf(cells), colour, 32))
          wrong.push(`${t.toFixed(2)} s: counter ${shown}, colour ${colourOf(cells)}, expected ${colour}`);
      }
    });
    expect(wrong).toEqual([]);
    // The speed-2 clip: 50 frames (2 s) showing source frames 25, 27, … 123 (1.00 s to 4.92 s).
    const fastFrames = frames.slice(FPS, 3 * FPS).map((f) => readCounter(f.cells));
    expect(fastFrames.length).toBe(2 * FPS);
    expect(fastFrames[0]).toBe(FPS);
    expect(Math.abs(fastFrames[fastFrames.length - 1]! - (5 * FPS - 2))).toBeLessThanOrEqual(1);
    // One download for the two clips that share the counter's URL.
    expect(fixtures.hits("/counter.mp4")).toBe(1);
  });

  it("the speed-2 clip's audio is sped up too: its level (+6 dB per source second) shows source time in + 2t; pitch is kept (atempo)", async () => {
    // Reference: the speed-1 clip at output 0.5 s plays source 0.5 s.
    const windowLevel = async (t: number) => (await volume(out, t - 0.05, 0.1)).mean;
    const reference = await windowLevel(0.5);
    const measured: { t: number; source: number; expected: number }[] = [];
    for (const t of [1.25, 1.75, 2.25, 2.75]) {
      const source = 0.5 + ((await windowLevel(t)) - reference) / COUNTER_DB_PER_SECOND;
      measured.push({ t, source: Number(source.toFixed(3)), expected: 1 + 2 * (t - 1) });
    }
    // Speed 1 would put source 1.25…2.75 there; speed 2 puts 1.5…4.5. ±0.1 s is ±0.6 dB.
    expect(
      measured.filter((m) => Math.abs(m.source - m.expected) > 0.1),
      JSON.stringify(measured),
    ).toEqual([]);
    const low = await volume(out, 1.2, 1.6, "lowpass=f=660,lowpass=f=660,lowpass=f=660");
    const high = await volume(out, 1.2, 1.6, "highpass=f=660,highpass=f=660,highpass=f=660");
    // Still 440 Hz (resampling to speed up would have made it 880 Hz).
    expect(low.mean - high.mean).toBeGreaterThan(10);
  });

  it("a source with no audio is silent for its clip; short audio is padded with silence; the next clip's sound starts on time", async () => {
    // The speed-2 clip is loud up to 3 s (its source's loudest part).
    expect((await volume(out, 2.8, 0.15)).mean).toBeGreaterThan(-30);
    expect((await volume(out, 3.1, 0.8)).max, "no-audio clip").toBeLessThanOrEqual(-80);
    const shortTone = await volume(out, 4.1, 0.8);
    expect(shortTone.mean, "short-audio clip, while its audio lasts").toBeGreaterThan(-30);
    expect((await volume(out, 5.1, 0.8)).max, "short-audio clip, after its audio ends").toBeLessThanOrEqual(-80);
    expect((await volume(out, 5.85, 0.1)).max, "just before the next clip").toBeLessThanOrEqual(-80);
    const afterTone = await volume(out, 6.05, 0.85);
    // The same 440 Hz tone at the same level: the next clip's own sound, not shifted.
    expect(Math.abs(afterTone.mean - shortTone.mean)).toBeLessThanOrEqual(1);
  });

  it("video and audio last exactly to the timeline's end, and the audio is one continuous stream", async () => {
    const probe = await ffprobeJson(out);
    const video = probe.streams.find((s) => s.codec_type === "video")!;
    const audio = probe.streams.find((s) => s.codec_type === "audio")!;
    expect(Math.abs(Number(video.duration) - END), `video ${video.duration}`).toBeLessThanOrEqual(FRAME + 0.001);
    expect(Math.abs(Number(audio.duration) - END), `audio ${audio.duration}`).toBeLessThanOrEqual(AAC_FRAME + 0.001);
    const decoded = await decodedAudioSeconds(out);
    expect(Math.abs(decoded - END), `decoded audio ${decoded} s`).toBeLessThanOrEqual(AAC_FRAME + 0.001);
    expect(await largestAudioHole(out)).toBeLessThanOrEqual(0.001);
  });
});

/**
 * A clip whose length is not a whole number of output frames: each segment is cut on the
 * output's frame grid, so the clip changes land on the nearest frame and lengths never add up.
 */
describe("contract §5.6 POST /edl › clips that are not a whole number of frames long", () => {
  it("four 2.5 s clips at 25 fps: each clip starts on time and the output lasts 10 s, within a frame", async () => {
    const u = fixtures.url;
    const job = await render({
      version: "1.0",
      output: { resolution: "320x240", fps: FPS },
      timeline: {
        tracks: [
          {
            type: "video",
            clips: [0, 1, 2, 3].map((i) => ({
              id: `c${i}`,
              src: u(i % 2 ? "green.mp4" : "blue.mp4"),
              in: 0,
              out: 2.5,
              startTime: 2.5 * i,
            })),
          },
        ],
      },
    });
    const out = await download(job, "mp4");
    const frames = await everyFrame(out, 1, 1);
    const isGreen = (i: number) => frames[i].cells[0][0][1] > 64;
    const changes = frames.flatMap((f, i) => (i > 0 && isGreen(i) !== isGreen(i - 1) ? [f.time] : []));
    expect(changes.length).toBe(3);
    changes.forEach((t, k) => {
      expect(Math.abs(t - 2.5 * (k + 1)), `clip change at ${t} s`).toBeLessThanOrEqual(FRAME + 0.001);
    });
    const probe = await ffprobeJson(out);
    const video = probe.streams.find((s) => s.codec_type === "video")!;
    const audio = probe.streams.find((s) => s.codec_type === "audio")!;
    expect(Math.abs(Number(video.duration) - 10), `video ${video.duration}`).toBeLessThanOrEqual(FRAME + 0.001);
    expect(Math.abs(Number(audio.duration) - 10), `audio ${audio.duration}`).toBeLessThanOrEqual(AAC_FRAME + 0.001);
  });
});

describe("contract §3.11 Output settings", () => {
  it("webm with VP9 and Opus at the requested resolution and frame rate", async () => {
    const job = await render({
      version: "1.0",
      output: {
        container: "webm",
        videoCodec: "libvpx-vp9",
        audioCodec: "opus",
        resolution: "256x144",
        fps: 24,
        videoBitrate: "300k",
        audioBitrate: "64k",
      },
      timeline: {
        tracks: [
          { type: "video", clips: [{ id: "only", src: fixtures.url("blue.mp4"), in: 0, out: 1.5, startTime: 0 }] },
        ],
      },
    });
    const probe = await ffprobeJson(await download(job, "webm"));
    const video = probe.streams.find((s) => s.codec_type === "video");
    expect(video).toMatchObject({ codec_name: "vp9", width: 256, height: 144, avg_frame_rate: "24/1" });
    expect(probe.streams.find((s) => s.codec_type === "audio")?.codec_name).toBe("opus");
    expect(Math.abs(Number(probe.format.duration) - 1.5)).toBeLessThanOrEqual(1 / 24 + 0.03);
  });
});

describe("contract §8.3 Failures after acceptance › EDL assets", () => {
  it("a missing asset fails the job with an errorMessage naming the clip", async () => {
    const job = await render({
      version: "1.0",
      timeline: {
        tracks: [
          {
            type: "video",
            clips: [{ id: "ghost-clip", src: fixtures.url("status/404/ghost.mp4"), in: 0, out: 1, startTime: 0 }],
          },
        ],
      },
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
          {
            type: "text",
            clips: [{ id: "t", text: "x", startTime: 0, duration: 1, fontFamily: "Definitely Not A Font" }],
          },
        ],
      },
    });
    expect(job.status).toBe("failed");
    expect(job.errorMessage).toContain("Definitely Not A Font");
  });

  // The e2e stack allows loopback (development), but nothing else that is not public.
  it("an asset at the cloud metadata address is refused at creation, naming the clip's field", async () => {
    const c = await e2e.client("pro");
    const edl = {
      version: "1.0",
      timeline: {
        tracks: [
          {
            type: "video",
            clips: [{ id: "metadata-clip", src: "http://169.254.169.254/x.mp4", in: 0, out: 1, startTime: 0 }],
          },
        ],
      },
    };
    const created = await c.createEdlJob(unchecked({ edl }));
    expectStatus(created, 400);
    expect(created.body).toMatchObject({
      error: "EDL validation failed",
      errors: [expect.stringMatching(/^timeline\.tracks\[0\]\.clips\[0\]\.src: .*at a public address$/)],
    });
  });

  it("an overlay image whose hostname resolves to a private address is refused: failed, not retried, the clip named", async () => {
    const job = await render({
      version: "1.0",
      timeline: {
        tracks: [
          { type: "video", clips: [{ id: "v", src: fixtures.url("blue.mp4"), in: 0, out: 1, startTime: 0 }] },
          {
            type: "overlay",
            clips: [{ id: "private-logo", src: `http://${PRIVATE_HOST}/logo.png`, startTime: 0, duration: 1 }],
          },
        ],
      },
    });
    expect(job).toMatchObject({ status: "failed", retryCount: 0 });
    expect(job.errorMessage).toContain("private-logo");
    expect(job.errorMessage).toMatch(/Source refused/);
    expect(job.errorMessage).toContain(PRIVATE_HOST);
  });

  it("a replaceAudio URL that redirects to a private address is refused at that hop: failed, not retried, the clip named", async () => {
    const hits = fixtures.hits("/redirect");
    const job = await render({
      version: "1.0",
      timeline: {
        tracks: [
          {
            type: "video",
            clips: [
              {
                id: "redirected-dub",
                src: fixtures.url("blue.mp4"),
                in: 0,
                out: 1,
                startTime: 0,
                replaceAudio: fixtures.url(`redirect?to=${encodeURIComponent("http://10.1.2.3/a.m4a")}`),
              },
            ],
          },
        ],
      },
    });
    expect(job).toMatchObject({ status: "failed", retryCount: 0 });
    expect(job.errorMessage).toContain("redirected-dub");
    expect(job.errorMessage).toMatch(/Source refused/);
    expect(fixtures.hits("/redirect") - hits).toBe(1);
  });
});

describe("contract §5.6 POST /edl › a version 1.1 timeline rendered end to end", () => {
  let out: string;

  beforeAll(async () => {
    const u = fixtures.url;
    await writeFile(join(fixtures.dir, "subs.vtt"), "WEBVTT\n\n00:00.500 --> 00:01.500\nHELLO\n");
    const job = await render({
      version: "1.1",
      output: { resolution: "320x240", fps: FPS },
      timeline: {
        tracks: [
          {
            type: "video",
            clips: [
              { id: "blue", src: u("blue.mp4"), in: 0, out: 3, startTime: 0 },
              {
                id: "grey",
                src: u("green.mp4"),
                in: 0,
                out: 3,
                startTime: 2,
                transition: { in: { type: "crossfade", duration: 1 } },
                filters: ["greyscale"],
                freeze: { at: 2, duration: 1 },
              },
            ],
          },
          { type: "caption", clips: [{ id: "subs", src: u("subs.vtt"), fontSize: 24 }] },
        ],
      },
    });
    out = await download(job, "mp4");
  });

  it("lasts the clips less their overlap plus the freeze: 3 + 3 − 1 + 1 = 6 s, picture and sound", async () => {
    const probe = await ffprobeJson(out);
    const video = probe.streams.find((s) => s.codec_type === "video")!;
    expect(Math.abs(Number(video.duration) - 6)).toBeLessThanOrEqual(FRAME + 0.001);
    const decoded = await decodedAudioSeconds(out);
    expect(Math.abs(decoded - 6), `decoded audio ${decoded} s`).toBeLessThanOrEqual(AAC_FRAME + 0.001);
  });

  it("blue, then the crossfade's midpoint halfway between blue and the greyed green, then grey", async () => {
    expect(closeTo(await pixelAt(out, 1, 160, 120), BLUE, 24)).toBe(true);
    const grey = await pixelAt(out, 4, 160, 120);
    expect(Math.max(...grey) - Math.min(...grey), `grey ${grey}`).toBeLessThanOrEqual(6);
    // The overlap is 2..3 s; frame 62 (2.48 s) is 12.5/25 of the way.
    const mid = await pixelAt(out, 62 / FPS, 160, 120);
    expect(closeTo(mid, blend(grey, BLUE, 0.5), 24), `midpoint ${mid}`).toBe(true);
  });

  it("the freeze (green's source second 2, timeline 4..5 s) is silent; the clip sounds either side", async () => {
    expect((await volume(out, 4.1, 0.8)).max).toBeLessThanOrEqual(-80);
    expect((await volume(out, 3.3, 0.5)).mean).toBeGreaterThan(-40);
    expect((await volume(out, 5.2, 0.6)).mean).toBeGreaterThan(-40);
  });

  it("the caption file's cue is drawn at the bottom from 0.5 s to 1.5 s only", async () => {
    const ink = async (t: number) => {
      const frame = await frameAt(out, t);
      let rows = 0;
      for (let y = 0; y < frame.height; y++)
        for (let x = 0; x < frame.width; x++)
          if (Math.min(...frame.pixel(x, y)) > 200) {
            expect(y, `ink at (${x}, ${y}) at ${t} s`).toBeGreaterThan(160);
            rows++;
          }
      return rows;
    };
    expect(await ink(0.3)).toBe(0);
    expect(await ink(1)).toBeGreaterThan(10);
    expect(await ink(1.8)).toBe(0);
  });

  it("a malformed caption file fails the job, not retried, naming the clip and the line", async () => {
    await writeFile(join(fixtures.dir, "broken.srt"), "1\n00:00:00,500 --> 00:00:01,000\nfine\n\n2\nnot a time\nx\n");
    const job = await render({
      version: "1.1",
      timeline: {
        tracks: [
          { type: "video", clips: [{ id: "v", src: fixtures.url("blue.mp4"), in: 0, out: 1, startTime: 0 }] },
          { type: "caption", clips: [{ id: "subs", src: fixtures.url("broken.srt") }] },
        ],
      },
    });
    expect(job).toMatchObject({ status: "failed", retryCount: 0 });
    expect(job.errorMessage).toMatch(/^Caption clip subs: line 6: /);
  });
});
