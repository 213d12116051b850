import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OverlayClip, Track } from "../../../domain/edl/validated-edl";
import { resolveFont } from "../../../encoder/timeline/fonts";
import { fontKey } from "../../../encoder/timeline/compile";
import { closeTo, type Frame, frameAt, type Rgb } from "../../support/frames";
import { ffmpeg } from "../../support/media";
import {
  flat,
  mediaOf,
  overlayClip,
  renderTimeline,
  textClip,
  timeline11,
  videoClip,
} from "../../support/timeline-render";

const BG = "https://media.example.com/blue.mp4";
const QUADRANTS = "https://media.example.com/quadrants.png";
const HALF = "https://media.example.com/half.png";
const RED: Rgb = [255, 0, 0];
const LIME: Rgb = [0, 255, 0];
const BLUE: Rgb = [0, 0, 255];
const YELLOW: Rgb = [255, 255, 0];
let dir: string;
let font: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "layers-"));
  const q = (c: string) => `color=c=${c}:s=20x20`;
  await Promise.all([
    flat(join(dir, "blue.mp4"), "blue", 2, 440),
    // Red, lime over blue, yellow, like the video tests' quadrants.
    ffmpeg([
      "-filter_complex",
      `${q("red")}[a];${q("lime")}[b];${q("blue")}[c];${q("yellow")}[d];[a][b]hstack[t];[c][d]hstack[u];[t][u]vstack`,
      "-frames:v",
      "1",
      join(dir, "quadrants.png"),
    ]),
    // Red, its right half transparent.
    ffmpeg(
      ["-f", "lavfi", "-i", "color=c=red:s=40x40,format=rgba,geq=r=255:g=0:b=0:a='if(lt(X,20),255,0)'"].concat([
        "-frames:v",
        "1",
        join(dir, "half.png"),
      ]),
    ),
  ]);
  font = await resolveFont("DejaVu Sans", "bold");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function render(name: string, layers: Track[]) {
  const edl = timeline11([{ type: "video", clips: [videoClip({ id: "bg", src: BG, out: 2 })] }, ...layers]);
  const { output } = await renderTimeline(dir, name, edl, {
    media: new Map([[BG, mediaOf(join(dir, "blue.mp4"))]]),
    images: new Map([
      [QUADRANTS, { path: join(dir, "quadrants.png"), width: 40, height: 40 }],
      [HALF, { path: join(dir, "half.png"), width: 40, height: 40 }],
    ]),
    fonts: new Map([[fontKey({ fontFamily: "DejaVu Sans", fontWeight: "bold" }), font]]),
  });
  return output;
}

const overlay = (fields: Partial<OverlayClip>): Track => ({
  type: "overlay",
  clips: [overlayClip({ id: "o", src: QUADRANTS, duration: 2, position: { x: 20, y: 20 }, ...fields })],
});

function expectColours(frame: Frame, expected: [number, number, Rgb][]) {
  for (const [x, y, colour] of expected)
    expect(closeTo(frame.pixel(x, y), colour, 40), `(${x}, ${y}) is ${frame.pixel(x, y)}, not ${colour}`).toBe(true);
}

describe("1.1 crop, transform and filters on overlay clips", () => {
  it("flip horizontal then a quarter turn clockwise: yellow top left, lime top right, red bottom right", async () => {
    const output = await render("overlay-turned", [
      overlay({ transform: { flip: "horizontal", rotate: 90, scale: 1 } }),
    ]);
    expectColours(await frameAt(output, 1), [
      [30, 30, YELLOW],
      [50, 30, LIME],
      [50, 50, RED],
      [80, 80, BLUE],
    ]);
  });

  it("rotate 45°: the box grows to 57x57, its corners transparent; red above the centre, yellow below", async () => {
    const output = await render("overlay-45", [
      overlay({ position: { x: 40, y: 20 }, transform: { rotate: 45, scale: 1 } }),
    ]);
    // The box's centre is (40 + 28, 20 + 28).
    expectColours(await frameAt(output, 1), [
      [68, 34, RED],
      [68, 62, YELLOW],
      [43, 23, BLUE],
      [94, 74, BLUE],
    ]);
  });

  it("crop to the right half, scaled 2: a 40x80 strip of lime over yellow at (20, 20)", async () => {
    const output = await render("overlay-cropped", [
      overlay({ crop: { top: 0, bottom: 0, left: 0.5, right: 0 }, transform: { rotate: 0, scale: 2 } }),
    ]);
    expectColours(await frameAt(output, 1), [
      [40, 40, LIME],
      [40, 80, YELLOW],
      [70, 60, BLUE],
    ]);
  });

  it("greyscale greys the image and keeps its transparency: grey left half, the background through the right", async () => {
    const output = await render("overlay-grey", [
      overlay({ src: HALF, filters: [{ type: "greyscale", strength: 1 }] }),
    ]);
    const frame = await frameAt(output, 1);
    const grey = frame.pixel(28, 40);
    expect(Math.max(...grey) - Math.min(...grey), `${grey}`).toBeLessThan(12);
    expect(grey[0], `${grey}`).toBeGreaterThan(40);
    expectColours(frame, [[50, 40, BLUE]]);
  });
});

describe("1.1 transitions on overlay and text clips", () => {
  it("an overlay's fade in is an alpha fade: halfway, red half over blue", async () => {
    const output = await render("overlay-fade", [
      overlay({ src: HALF, transition: { in: { type: "fade", duration: 1 } } }),
    ]);
    expectColours(await frameAt(output, 0.5), [[28, 40, [128, 0, 128]]]);
    expectColours(await frameAt(output, 1.5), [[28, 40, RED]]);
  });

  it("slideLeft in comes from the right, a frame's width away; slideDown out leaves by the bottom", async () => {
    const output = await render("overlay-slide", [
      overlay({
        src: HALF,
        position: { x: 20, y: 40 },
        transition: { in: { type: "slideLeft", duration: 1 }, out: { type: "slideDown", duration: 0.5 } },
      }),
    ]);
    // Halfway in, the image is 80 px right of its place: its red half over x 100..120.
    const half = await frameAt(output, 0.5);
    expectColours(half, [
      [110, 60, RED],
      [30, 60, BLUE],
    ]);
    expectColours(await frameAt(output, 1.2), [
      [30, 60, RED],
      [110, 60, BLUE],
    ]);
    // Half way out (1.75 s), it is 60 px lower: rows 100..140, so row 60 is clear and row 110 red.
    expectColours(await frameAt(output, 1.76), [
      [30, 60, BLUE],
      [30, 110, RED],
    ]);
  });

  it("a blended overlay slides too: multiply's black (red on blue) comes in from the left", async () => {
    const output = await render("overlay-blend-slide", [
      overlay({
        src: HALF,
        position: { x: 100, y: 40 },
        blendMode: "multiply",
        transition: { in: { type: "slideRight", duration: 1 } },
      }),
    ]);
    // Halfway in, 80 px left of its place: its red half over x 20..40.
    expectColours(await frameAt(output, 0.5), [
      [30, 60, [0, 0, 0]],
      [110, 60, BLUE],
    ]);
    expectColours(await frameAt(output, 1.2), [
      [110, 60, [0, 0, 0]],
      [30, 60, BLUE],
      // The transparent half leaves the picture as it was.
      [130, 60, BLUE],
    ]);
  });

  it("a text's slideUp in rises from below the frame: halfway, its ink is 60 rows lower than at rest", async () => {
    const output = await render("text-slide", [
      {
        type: "text",
        clips: [
          textClip({
            id: "t",
            text: "III",
            fontSize: 30,
            position: { x: "center", y: "top" },
            duration: 2,
            transition: { in: { type: "slideUp", duration: 1 } },
          }),
        ],
      },
    ]);
    const inkRows = (frame: Frame) => {
      const rows: number[] = [];
      for (let y = 0; y < frame.height; y++)
        for (let x = 0; x < frame.width; x++) if (Math.min(...frame.pixel(x, y)) > 200) rows.push(y);
      return { top: Math.min(...rows), bottom: Math.max(...rows) };
    };
    const rest = inkRows(await frameAt(output, 1.5));
    const half = inkRows(await frameAt(output, 0.5));
    expect(rest.top).toBeLessThan(15);
    expect(half.top - rest.top).toBeGreaterThanOrEqual(56);
    expect(half.top - rest.top).toBeLessThanOrEqual(64);
  });
});
