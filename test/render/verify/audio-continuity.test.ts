import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { audioDiscontinuities, audioEndVsVideoEnd } from "../../support/audio-continuity.ts";
import { makeNumberedSource } from "../../support/frame-numbers.ts";
import { ffmpeg } from "../../support/media.ts";

let dir: string;
let source: string;

/** 3 s of a 440 Hz tone as makeNumberedSource makes it, bent by `wave` (an aevalsrc expression of t), in AAC. */
async function tone(name: string, wave: string): Promise<string> {
  const path = join(dir, name);
  await ffmpeg([
    "-f",
    "lavfi",
    "-i",
    `aevalsrc='${wave}':s=48000:d=3`,
    "-ac",
    "2",
    "-c:a",
    "aac",
    "-b:a",
    "128k",
    path,
  ]);
  return path;
}

afterAll(() => rm(dir, { recursive: true, force: true }));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "audio-continuity-"));
  source = join(dir, "source.mp4");
  await makeNumberedSource(source, {
    seconds: 3,
    fps: { num: 30000, den: 1001 },
    width: 320,
    height: 180,
    audio: true,
  });
});

describe("audioDiscontinuities", () => {
  it("finds none in the numbered source's tone, in MP4 and in WebM (Opus)", async () => {
    expect(await audioDiscontinuities(source, { toneHz: 440 })).toEqual([]);
    const webm = join(dir, "source.webm");
    await ffmpeg(["-i", source, "-vn", "-c:a", "libopus", "-b:a", "128k", webm]);
    expect(await audioDiscontinuities(webm, { toneHz: 440 })).toEqual([]);
  });

  it("finds 20 ms of silence, with the jumps at its edges", async () => {
    const silenced = await tone("silence.m4a", "0.125*sin(2*PI*440*t)*not(between(t,1,1.02))");
    const found = await audioDiscontinuities(silenced, { toneHz: 440 });
    const gaps = found.filter((d) => d.kind === "gap");
    expect(gaps).toHaveLength(1);
    expect(gaps[0].at).toBeCloseTo(1, 2);
    expect(gaps[0].kind === "gap" && gaps[0].seconds).toBeGreaterThan(0.015);
    expect(found.filter((d) => d.kind === "jump").length).toBeGreaterThan(0);
  });

  it("finds 20 ms of tone cut out (a splice), and a click", async () => {
    const spliced = await tone("spliced.m4a", "0.125*sin(2*PI*440*(t+0.02*gte(t,1)))");
    expect(
      (await audioDiscontinuities(spliced, { toneHz: 440 })).map((d) => [d.kind, Math.round(d.at * 100) / 100]),
    ).toEqual([["jump", 1]]);
    const clicked = await tone("click.m4a", "0.125*sin(2*PI*440*t)+0.5*between(t,2,2.0002)");
    expect(
      (await audioDiscontinuities(clicked, { toneHz: 440 })).map((d) => [d.kind, Math.round(d.at * 100) / 100]),
    ).toEqual([["jump", 2]]);
  });
});

describe("audioEndVsVideoEnd", () => {
  it("is within an audio frame for the source, and half a second short when its audio is cut", async () => {
    expect(Math.abs(await audioEndVsVideoEnd(source))).toBeLessThan(0.03);
    const short = join(dir, "short.mp4");
    await ffmpeg(["-i", source, "-c:v", "copy", "-af", "atrim=end=2.5", "-c:a", "aac", short]);
    expect(await audioEndVsVideoEnd(short)).toBeCloseTo(-0.5, 1);
  });
});
