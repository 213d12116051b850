import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ssimAt } from "../../support/cut-quality.ts";
import { makeNumberedSource } from "../../support/frame-numbers.ts";
import { ffmpeg } from "../../support/media.ts";

let dir: string;
let source: string;
/** Frames where a split encode would cut: the 1 s keyframes of a 2 s, 29.97 fps source. */
const CUTS = [30];

/** Re-encodes the source at 240p through `filter`, as one rung of a ladder would. */
async function encode(name: string, filter: string): Promise<string> {
  const path = join(dir, name);
  await ffmpeg(["-i", source, "-an", "-vf", filter, "-c:v", "libx264", "-preset", "ultrafast", "-crf", "23", path]);
  return path;
}

afterAll(() => rm(dir, { recursive: true, force: true }));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cut-quality-"));
  source = join(dir, "source.mp4");
  await makeNumberedSource(source, {
    seconds: 2,
    fps: { num: 30000, den: 1001 },
    width: 640,
    height: 360,
    audio: false,
    keyframeSeconds: 1,
  });
});

describe("ssimAt", () => {
  it("finds a cut frame as good as the interior in an even encode", async () => {
    const even = await encode("even.mp4", "scale=-2:240");
    const { at, interiorMean } = await ssimAt(even, source, CUTS);
    expect(interiorMean).toBeGreaterThan(0.8);
    expect(Math.abs(at[0] - interiorMean)).toBeLessThan(0.03);
  });

  it("finds a cut frame encoded worse than the interior", async () => {
    const smeared = await encode("smeared.mp4", "scale=-2:240,boxblur=4:enable='eq(n,30)'");
    const { at, interiorMean } = await ssimAt(smeared, source, CUTS);
    expect(at[0]).toBeLessThan(interiorMean - 0.1);
  });
});
