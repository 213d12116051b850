import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TransitionType, VideoClip } from "../../../domain/edl/validated-edl";
import { closeTo, decodedAudioSeconds, frameAt, type Rgb } from "../../support/frames";
import { ffprobeJson } from "../../support/media";
import { rms, samplesOf, strongestTones } from "../../support/spectrum";
import { FPS, flat, mediaOf, renderTimeline, timeline11, videoClip } from "../../support/timeline-render";

const RED_SRC = "https://media.example.com/red.mp4";
const BLUE_SRC = "https://media.example.com/blue.mp4";
const RED: Rgb = [255, 0, 0];
const BLUE: Rgb = [0, 0, 255];
const BLACK: Rgb = [0, 0, 0];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "transitions-"));
  await Promise.all([flat(join(dir, "red.mp4"), "red", 2, 440), flat(join(dir, "blue.mp4"), "blue", 2, 1000)]);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const assets = () => ({
  media: new Map([
    [RED_SRC, mediaOf(join(dir, "red.mp4"))],
    [BLUE_SRC, mediaOf(join(dir, "blue.mp4"))],
  ]),
});

/** Red (440 Hz, 2 s) then blue (1 kHz, 2 s) starting 1 s before red ends, joined by `type`: 3 s in all. */
async function pair(type: TransitionType) {
  const edl = timeline11([
    {
      type: "video",
      clips: [
        videoClip({ id: "red", src: RED_SRC, out: 2 }),
        videoClip({ id: "blue", src: BLUE_SRC, out: 2, startTime: 1, transition: { in: { type, duration: 1 } } }),
      ],
    },
  ]);
  return (await renderTimeline(dir, type, edl, assets())).output;
}

async function oneClip(name: string, fields: Partial<VideoClip>) {
  const edl = timeline11([{ type: "video", clips: [videoClip({ id: name, src: RED_SRC, out: 2, ...fields })] }]);
  return (await renderTimeline(dir, name, edl, assets())).output;
}

describe("1.1 crossfade between adjacent clips: they overlap for its duration, picture and sound", () => {
  let output: string;
  beforeAll(async () => {
    output = await pair("crossfade");
  });

  it("the output is the timeline's length (2 + 2 − 1 = 3 s): 75 frames, and 3 s of sound", async () => {
    const probe = await ffprobeJson(output, ["-count_frames"]);
    expect(Number(probe.streams.find((s) => s.codec_type === "video")!.nb_read_frames)).toBe(3 * FPS);
    expect(await decodedAudioSeconds(output)).toBeCloseTo(3, 1);
  });

  it("red before the overlap, blue after it, and the midpoint the average of the two", async () => {
    expect(closeTo((await frameAt(output, 0.5)).pixel(80, 60), RED, 12)).toBe(true);
    expect(closeTo((await frameAt(output, 2.5)).pixel(80, 60), BLUE, 12)).toBe(true);
    // The overlap is frames 25..49; frame 37 is 12.5/25 of the way.
    const mid = (await frameAt(output, 37 / FPS)).pixel(80, 60);
    expect(closeTo(mid, [128, 0, 128], 24), `midpoint ${mid}`).toBe(true);
  });

  it("the sound holds 440 Hz alone before, both tones at comparable levels at the midpoint, 1 kHz alone after", async () => {
    const near = (hz: number, target: number) => Math.abs(hz - target) < 25;
    const [before] = strongestTones(await samplesOf(output, 0.3, 0.4), 1);
    expect(near(before.hz, 440), `${before.hz} Hz`).toBe(true);
    const both = strongestTones(await samplesOf(output, 1.4, 0.2), 2);
    expect(both.some((t) => near(t.hz, 440)) && both.some((t) => near(t.hz, 1000)), JSON.stringify(both)).toBe(true);
    expect(Math.max(both[0].level, both[1].level) / Math.min(both[0].level, both[1].level)).toBeLessThan(2);
    const [after] = strongestTones(await samplesOf(output, 2.3, 0.4), 1);
    expect(near(after.hz, 1000), `${after.hz} Hz`).toBe(true);
  });
});

describe("1.1 wipeLeft: blue comes in from the right, its edge moving left across the overlap", () => {
  it("a quarter through, the edge is three quarters across; halfway, at the middle", async () => {
    const output = await pair("wipeLeft");
    // Frame 31 is 6/25 of the way: the edge near x = 160 × 0.76 ≈ 122.
    const quarter = await frameAt(output, 31 / FPS);
    expect(closeTo(quarter.pixel(105, 60), RED, 30), `${quarter.pixel(105, 60)}`).toBe(true);
    expect(closeTo(quarter.pixel(140, 60), BLUE, 30), `${quarter.pixel(140, 60)}`).toBe(true);
    // Frame 37: 12/25 of the way, the edge near x = 83.
    const half = await frameAt(output, 37 / FPS);
    expect(closeTo(half.pixel(65, 60), RED, 30), `${half.pixel(65, 60)}`).toBe(true);
    expect(closeTo(half.pixel(100, 60), BLUE, 30), `${half.pixel(100, 60)}`).toBe(true);
    const probe = await ffprobeJson(output, ["-count_frames"]);
    expect(Number(probe.streams.find((s) => s.codec_type === "video")!.nb_read_frames)).toBe(3 * FPS);
  });
});

describe("1.1 fade and transitions with no neighbour", () => {
  it("fade in and out go through black, and the sound fades with the picture", async () => {
    const output = await oneClip("fade", {
      transition: { in: { type: "fade", duration: 0.5 }, out: { type: "fade", duration: 0.5 } },
    });
    expect(closeTo((await frameAt(output, 0)).pixel(80, 60), BLACK, 12)).toBe(true);
    const half = (await frameAt(output, 0.24)).pixel(80, 60);
    expect(half[0], `${half}`).toBeGreaterThan(80);
    expect(half[0], `${half}`).toBeLessThan(180);
    expect(closeTo((await frameAt(output, 1)).pixel(80, 60), RED, 12)).toBe(true);
    expect(closeTo((await frameAt(output, 1.96)).pixel(80, 60), BLACK, 24)).toBe(true);
    const full = rms(await samplesOf(output, 0.8, 0.4));
    expect(rms(await samplesOf(output, 0, 0.05))).toBeLessThan(full / 4);
    expect(rms(await samplesOf(output, 1.95, 0.05))).toBeLessThan(full / 4);
  });

  it("a wipeRight in and a circleOpen out on a lone clip play against black; the clip keeps its 2 s", async () => {
    const output = await oneClip("with-black", {
      transition: { in: { type: "wipeRight", duration: 1 }, out: { type: "circleOpen", duration: 0.5 } },
    });
    // wipeRight: the clip comes in from the left; halfway, the left half is red, the right black.
    const half = await frameAt(output, 12 / FPS);
    expect(closeTo(half.pixel(40, 60), RED, 30), `${half.pixel(40, 60)}`).toBe(true);
    expect(closeTo(half.pixel(130, 60), BLACK, 30), `${half.pixel(130, 60)}`).toBe(true);
    expect(closeTo((await frameAt(output, 1.2)).pixel(80, 60), RED, 12)).toBe(true);
    const probe = await ffprobeJson(output, ["-count_frames"]);
    expect(Number(probe.streams.find((s) => s.codec_type === "video")!.nb_read_frames)).toBe(2 * FPS);
    expect(await decodedAudioSeconds(output)).toBeCloseTo(2, 1);
  });
});

describe("1.1 transitions among cuts and gaps", () => {
  it("a crossfade, a gap, then two clips cut together: every piece where the timeline puts it, 6 s exactly", async () => {
    const edl = timeline11([
      {
        type: "video",
        clips: [
          videoClip({ id: "a", src: RED_SRC, out: 2 }),
          videoClip({
            id: "b",
            src: BLUE_SRC,
            out: 2,
            startTime: 1.5,
            transition: { in: { type: "crossfade", duration: 0.5 } },
          }),
          videoClip({ id: "c", src: RED_SRC, out: 1, startTime: 4 }),
          videoClip({
            id: "d",
            src: BLUE_SRC,
            out: 1,
            startTime: 5,
            transition: { out: { type: "fade", duration: 0.2 } },
          }),
        ],
      },
    ]);
    const { output, compiled } = await renderTimeline(dir, "mixed", edl, assets());
    expect(compiled.duration).toBe(6);
    const probe = await ffprobeJson(output, ["-count_frames"]);
    expect(Number(probe.streams.find((s) => s.codec_type === "video")!.nb_read_frames)).toBe(6 * FPS);
    expect(await decodedAudioSeconds(output)).toBeCloseTo(6, 1);
    for (const [t, colour] of [
      [1, RED],
      [3, BLUE],
      [3.75, BLACK],
      [4.5, RED],
      [5.5, BLUE],
    ] as const)
      expect(closeTo((await frameAt(output, t)).pixel(80, 60), colour, 16), `at ${t} s`).toBe(true);
    expect(rms(await samplesOf(output, 3.6, 0.3))).toBeLessThan(0.001);
  });
});
