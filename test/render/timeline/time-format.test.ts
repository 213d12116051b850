import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateEdl } from "../../../domain/edl/validate";
import { runFfmpeg } from "../../../encoder/ffmpeg/run";
import { compileTimeline, fontKey } from "../../../encoder/timeline/compile";
import { resolveFont } from "../../../encoder/timeline/fonts";
import { ffmpeg, makeSource } from "../../support/media";

const SRC = "https://media.example.com/clip.mp4";
const IMG = "https://media.example.com/logo.png";
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "time-format-"));
  await makeSource(join(dir, "clip.mp4"), { seconds: 2, width: 160, height: 120, fps: 25 });
  await ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=32x32", "-frames:v", "1", join(dir, "logo.png")]);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("tiny times in a timeline never reach FFmpeg in exponent notation", () => {
  it("in-points, starts and fades of 1e-7 s compile to fixed point, and FFmpeg renders them", async () => {
    const validation = validateEdl(
      {
        version: "1.0",
        output: { resolution: "160x120", fps: 25 },
        timeline: {
          tracks: [
            { type: "video", clips: [{ id: "a", src: SRC, in: 1e-7, out: 1, startTime: 1e-7 }] },
            {
              type: "overlay",
              clips: [{ id: "o", src: IMG, startTime: 1e-7, duration: 0.5, fadeIn: 1e-7, fadeOut: 0.2 }],
            },
            {
              type: "overlay",
              clips: [{ id: "m", src: IMG, startTime: 1e-7, duration: 0.5, fadeIn: 0.2, blendMode: "multiply" }],
            },
            {
              type: "text",
              clips: [
                {
                  id: "t",
                  text: "hi",
                  startTime: 1e-7,
                  duration: 0.5,
                  fontFamily: "DejaVu Sans",
                  fadeIn: 1e-7,
                  fadeOut: 0.1,
                },
              ],
            },
          ],
        },
      },
      "enterprise",
    );
    expect(validation.errors).toEqual([]);
    const output = join(dir, "out.mp4");
    const compiled = compileTimeline(
      validation.edl!,
      {
        media: new Map([
          [SRC, { path: join(dir, "clip.mp4"), hasVideo: true, hasAudio: true, width: 160, height: 120, fps: 25 }],
        ]),
        images: new Map([[IMG, { path: join(dir, "logo.png"), width: 32, height: 32 }]]),
        fonts: new Map([
          [fontKey({ fontFamily: "DejaVu Sans", fontWeight: "normal" }), await resolveFont("DejaVu Sans", "normal")],
        ]),
      },
      { workDir: dir, output },
    );
    const args = `${compiled.args.join(" ")} ${compiled.graph}`;
    expect(args).not.toMatch(/\de[-+]?\d/);
    expect(args).toContain("-ss 0 -t 1 -i");
    // A fade of 0 s at FFmpeg's resolution is left out: given d=0 the fade filter fades over 25 frames.
    expect(args).not.toContain(":d=0:");
    expect(args).toContain("fade=t=out:st=0.3:d=0.2:alpha=1");
    expect(args).toContain("fade=t=in:st=0:d=0.2:color=white");
    expect(args).toContain("enable='between(t,0,0.5)'");
    expect(args).toContain("alpha='if(gt(t,0.4),(0.5-t)/0.1,1)'");
    await Promise.all(compiled.files.map((f) => writeFile(f.path, f.content)));
    await runFfmpeg(compiled.args, { workDir: dir });
  });
});
