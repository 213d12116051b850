import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VideoClip } from "../../../domain/edl/validated-edl";
import { closeTo, frameAt, type Rgb } from "../../support/frames";
import { mediaOf, quadrants, renderTimeline, timeline11, videoClip } from "../../support/timeline-render";

const run = promisify(execFile);
const SRC = "https://media.example.com/quadrants.mp4";
const RED: Rgb = [255, 0, 0];
const LIME: Rgb = [0, 255, 0];
const BLUE: Rgb = [0, 0, 255];
const YELLOW: Rgb = [255, 255, 0];
const BLACK: Rgb = [0, 0, 0];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "effects-"));
  await quadrants(join(dir, "quadrants.mp4"), 1);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** One clip of the quadrants with `fields`, rendered; the frame at 0.5 s. */
async function frameWith(name: string, fields: Partial<VideoClip>) {
  const edl = timeline11([{ type: "video", clips: [videoClip({ id: name, src: SRC, out: 1, ...fields })] }]);
  const { output } = await renderTimeline(dir, name, edl, {
    media: new Map([[SRC, mediaOf(join(dir, "quadrants.mp4"))]]),
  });
  return { frame: await frameAt(output, 0.5), output };
}

/** Checks each named point of the 160x120 frame has the colour given. */
function expectColours(frame: Awaited<ReturnType<typeof frameAt>>, expected: [number, number, Rgb][]) {
  for (const [x, y, colour] of expected)
    expect(frame.pixel(x, y), `(${x}, ${y}) is ${frame.pixel(x, y)}, not ${colour}`).toSatisfy((p: Rgb) =>
      closeTo(p, colour, 40),
    );
}

describe("1.1 crop and transform move a known pattern where they should (four quadrants: red, lime / blue, yellow)", () => {
  it("untouched, the quadrants are where the source has them", async () => {
    const { frame } = await frameWith("plain", {});
    expectColours(frame, [
      [40, 30, RED],
      [120, 30, LIME],
      [40, 90, BLUE],
      [120, 90, YELLOW],
    ]);
  });

  it("crop to the top-left quarter: red fills the frame", async () => {
    const { frame } = await frameWith("crop", { crop: { top: 0, bottom: 0.5, left: 0, right: 0.5 } });
    expectColours(frame, [
      [5, 5, RED],
      [80, 60, RED],
      [154, 114, RED],
    ]);
  });

  it("crop of the right half (aspect 2:3): yellow under lime, pillarboxed in black", async () => {
    const { frame } = await frameWith("crop-right", { crop: { top: 0, bottom: 0, left: 0.5, right: 0 } });
    // 80x120 fitted into 160x120: x 40..120.
    expectColours(frame, [
      [10, 60, BLACK],
      [80, 30, LIME],
      [80, 90, YELLOW],
      [150, 60, BLACK],
    ]);
  });

  it("flip horizontal swaps left and right; vertical swaps top and bottom; both turns it half round", async () => {
    expectColours((await frameWith("flip-h", { transform: { rotate: 0, scale: 1, flip: "horizontal" } })).frame, [
      [40, 30, LIME],
      [120, 30, RED],
      [40, 90, YELLOW],
      [120, 90, BLUE],
    ]);
    expectColours((await frameWith("flip-v", { transform: { rotate: 0, scale: 1, flip: "vertical" } })).frame, [
      [40, 30, BLUE],
      [120, 30, YELLOW],
      [40, 90, RED],
      [120, 90, LIME],
    ]);
    expectColours((await frameWith("flip-both", { transform: { rotate: 0, scale: 1, flip: "both" } })).frame, [
      [40, 30, YELLOW],
      [120, 30, BLUE],
      [40, 90, LIME],
      [120, 90, RED],
    ]);
  });

  it("rotate 90° clockwise: bottom-left comes to the top left, the 120x160 picture pillarboxed (x 35..125)", async () => {
    const { frame } = await frameWith("rotate-90", { transform: { rotate: 90, scale: 1 } });
    expectColours(frame, [
      [15, 60, BLACK],
      [55, 30, BLUE],
      [105, 30, RED],
      [55, 90, YELLOW],
      [105, 90, LIME],
      [145, 60, BLACK],
    ]);
  });

  it("rotate -90° is 270°: top-right comes to the top left", async () => {
    const { frame } = await frameWith("rotate-270", { transform: { rotate: -90, scale: 1 } });
    expectColours(frame, [
      [55, 30, LIME],
      [105, 30, YELLOW],
      [55, 90, RED],
      [105, 90, BLUE],
    ]);
  });

  it("rotate 45°: the box grows to hold the turned picture, its corners black; the centre keeps its colours", async () => {
    const { frame } = await frameWith("rotate-45", { transform: { rotate: 45, scale: 1 } });
    // Red's quadrant, turned 45° clockwise about the centre, lies above it.
    expectColours(frame, [
      [40, 5, BLACK],
      [120, 115, BLACK],
      [80, 40, RED],
      [80, 80, YELLOW],
    ]);
  });

  it("scale 0.5: the fitted picture at half size, centred on black; scale 2 shows its middle at twice the size", async () => {
    expectColours((await frameWith("scale-half", { transform: { rotate: 0, scale: 0.5 } })).frame, [
      [20, 15, BLACK],
      [140, 105, BLACK],
      [60, 45, RED],
      [100, 45, LIME],
      [60, 75, BLUE],
      [100, 75, YELLOW],
    ]);
    expectColours((await frameWith("scale-double", { transform: { rotate: 0, scale: 2 } })).frame, [
      [5, 5, RED],
      [154, 5, LIME],
      [5, 114, BLUE],
      [154, 114, YELLOW],
    ]);
  });

  it("crop, then flip, then rotate: the top half flipped and turned a quarter", async () => {
    const { frame } = await frameWith("crop-flip-rotate", {
      crop: { top: 0, bottom: 0.5, left: 0, right: 0 },
      transform: { rotate: 90, scale: 1, flip: "horizontal" },
    });
    // Top half [red | lime] flipped to [lime | red], turned clockwise: lime above red, a 60x160 strip.
    expectColours(frame, [
      [80, 30, LIME],
      [80, 90, RED],
      [20, 60, BLACK],
    ]);
  });
});

/** Every pixel's U and V of the frame at `seconds` (yuv444p), as their largest distance from 128. */
async function chromaSpread(path: string, seconds: number): Promise<number> {
  const { stdout } = (await run(
    "ffmpeg",
    ["-v", "error", "-ss", String(seconds), "-i", path, "-frames:v", "1", "-pix_fmt", "yuv444p", "-f", "rawvideo", "-"],
    { encoding: "buffer", maxBuffer: 16 * 1024 * 1024 },
  )) as unknown as { stdout: Buffer };
  const plane = stdout.length / 3;
  let spread = 0;
  for (let i = plane; i < stdout.length; i++) spread = Math.max(spread, Math.abs(stdout[i] - 128));
  return spread;
}

describe("1.1 filters on video clips change the colours as named", () => {
  it("greyscale leaves no chroma: U and V within 2 of 128 over the whole frame (the source spreads them by over 100)", async () => {
    const plain = await frameWith("grey-source", {});
    expect(await chromaSpread(plain.output, 0.5)).toBeGreaterThan(100);
    const { output } = await frameWith("greyscale", { filters: [{ type: "greyscale", strength: 1 }] });
    expect(await chromaSpread(output, 0.5)).toBeLessThanOrEqual(2);
  });

  it("negative turns each quadrant to its complement; half strength leaves them grey", async () => {
    expectColours((await frameWith("negative", { filters: [{ type: "negative", strength: 1 }] })).frame, [
      [40, 30, [0, 255, 255]],
      [120, 30, [255, 0, 255]],
      [40, 90, [255, 255, 0]],
      [120, 90, [0, 0, 255]],
    ]);
    expectColours((await frameWith("negative-half", { filters: [{ type: "negative", strength: 0.5 }] })).frame, [
      [40, 30, [128, 128, 128]],
      [120, 90, [128, 128, 128]],
    ]);
  });

  it("sepia makes blue brownish (red over green over blue); darken and lighten move the brightness", async () => {
    const sepia = (await frameWith("sepia", { filters: [{ type: "sepia", strength: 1 }] })).frame.pixel(40, 90);
    expect(sepia[0]).toBeGreaterThan(sepia[1]);
    expect(sepia[1]).toBeGreaterThan(sepia[2]);
    const darker = (await frameWith("darken", { filters: [{ type: "darken", strength: 1 }] })).frame.pixel(120, 90);
    const lighter = (await frameWith("lighten", { filters: [{ type: "lighten", strength: 1 }] })).frame.pixel(40, 90);
    expect(darker[0] + darker[1]).toBeLessThan(2 * 255 - 80);
    expect(lighter[0] + lighter[1]).toBeGreaterThan(80);
  });

  it("blur mixes the quadrants across their edge; away from it the colours stay", async () => {
    const { frame } = await frameWith("blur", { filters: [{ type: "blur", strength: 1 }] });
    const edge = frame.pixel(80, 30);
    expect(closeTo(edge, RED, 40) || closeTo(edge, LIME, 40), `edge ${edge}`).toBe(false);
    expectColours(frame, [[20, 20, RED]]);
  });
});
