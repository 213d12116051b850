import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateEdl } from "../../../domain/edl/validate";
import { runFfmpeg } from "../../../encoder/ffmpeg/run";
import { compileTimeline } from "../../../encoder/timeline/compile";
import { closeTo, pixelAt } from "../../support/frames";
import { ffmpeg } from "../../support/media";

const SRC = "https://media.example.com/blue.mp4";
const IMG = "https://media.example.com/red.png";
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "blend-"));
  await ffmpeg([
    "-f",
    "lavfi",
    "-i",
    "color=c=blue:size=160x120:rate=25:duration=2",
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-pix_fmt",
    "yuv420p",
    join(dir, "blue.mp4"),
  ]);
  await ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=40x40", "-frames:v", "1", join(dir, "red.png")]);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Red over blue, by mode, at full opacity: what each blend formula gives in RGB. */
const EXPECTED: Record<string, [number, number, number]> = {
  normal: [255, 0, 0],
  // Half opacity mixes the image toward the mode's neutral white: (255,128,128) × blue.
  "multiply@0.5": [0, 0, 128],
  multiply: [0, 0, 0],
  screen: [255, 0, 255],
  darken: [0, 0, 0],
  lighten: [255, 0, 255],
  overlay: [0, 0, 255],
};

describe("every blend mode renders through FFmpeg with the expected colour under the image", () => {
  for (const [name, colour] of Object.entries(EXPECTED)) {
    const [mode, opacity = "1"] = name.split("@");
    it(name, async () => {
      const validation = validateEdl(
        {
          version: "1.0",
          timeline: {
            tracks: [
              { type: "video", clips: [{ id: "bg", src: SRC, in: 0, out: 2, startTime: 0 }] },
              {
                type: "overlay",
                clips: [
                  {
                    id: "o",
                    src: IMG,
                    startTime: 0.5,
                    duration: 1,
                    position: { x: 20, y: 20 },
                    blendMode: mode,
                    opacity: Number(opacity),
                  },
                ],
              },
            ],
          },
        },
        "pro",
      );
      expect(validation.errors).toEqual([]);
      const output = join(dir, `${name}.mp4`);
      const compiled = compileTimeline(
        validation.edl!,
        {
          media: new Map([
            [SRC, { path: join(dir, "blue.mp4"), hasVideo: true, hasAudio: false, width: 160, height: 120, fps: 25 }],
          ]),
          images: new Map([[IMG, { path: join(dir, "red.png"), width: 40, height: 40 }]]),
          fonts: new Map(),
        },
        { workDir: dir, output },
      );
      await Promise.all(compiled.files.map((f) => writeFile(f.path, f.content)));
      await runFfmpeg(compiled.args, { workDir: dir });
      expect(
        closeTo(await pixelAt(output, 1, 40, 40), colour, 40),
        `${name}: ${await pixelAt(output, 1, 40, 40)}`,
      ).toBe(true);
      // Outside its window and outside its area, the picture is untouched.
      expect(closeTo(await pixelAt(output, 0.2, 40, 40), [0, 0, 255], 40)).toBe(true);
      expect(closeTo(await pixelAt(output, 1, 120, 100), [0, 0, 255], 40)).toBe(true);
    });
  }
});
