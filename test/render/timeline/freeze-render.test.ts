import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodedAudioSeconds, rawFrames } from "../../support/frames";
import { ffprobeJson, makeSource } from "../../support/media";
import { rms, samplesOf } from "../../support/spectrum";
import { FPS, FRAME, mediaOf, renderTimeline, timeline11, videoClip } from "../../support/timeline-render";

const SRC = "https://media.example.com/moving.mp4";
let dir: string;
let output: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "freeze-"));
  // testsrc2 moves every frame, and has a 440 Hz tone.
  await makeSource(join(dir, "moving.mp4"), { seconds: 3, width: 160, height: 120, fps: FPS });
  const edl = timeline11([
    {
      type: "video",
      clips: [videoClip({ id: "held", src: SRC, in: 0.4, out: 2.4, freeze: { at: 1, duration: 1 } })],
    },
  ]);
  // Lossless, so frames FFmpeg repeated decode to identical bytes.
  edl.output.crf = 0;
  ({ output } = await renderTimeline(dir, "freeze", edl, {
    media: new Map([[SRC, mediaOf(join(dir, "moving.mp4"))]]),
  }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("1.1 freeze holds the frame at `at` for its duration, in silence, and lengthens the clip", () => {
  it("the clip lasts its 2 s span plus the 1 s hold, picture and sound", async () => {
    const probe = await ffprobeJson(output, ["-count_frames"]);
    expect(Number(probe.streams.find((s) => s.codec_type === "video")!.nb_read_frames)).toBe(3 * FPS);
    expect(await decodedAudioSeconds(output)).toBeCloseTo(3, 1);
  });

  it("frames 15 to 40 (source 1 s, then the 1 s hold) are identical; the frames either side differ", async () => {
    const frames = await rawFrames(output, { ...FRAME, pixelFormat: "rgb24" });
    const size = FRAME.width * FRAME.height * 3;
    const hash = (i: number) =>
      createHash("sha1")
        .update(frames.subarray(i * size, (i + 1) * size))
        .digest("hex");
    // `at` is 0.6 s into the clip (in 0.4): frame 15; held for 25 more frames.
    const held = hash(15);
    for (let i = 16; i <= 40; i++) expect(hash(i), `frame ${i}`).toBe(held);
    // The frame held is the source's at `at` (1 s: its frame 25), rendered losslessly.
    const source = await rawFrames(join(dir, "moving.mp4"), { ...FRAME, pixelFormat: "rgb24" });
    expect(
      createHash("sha1")
        .update(source.subarray(25 * size, 26 * size))
        .digest("hex"),
    ).toBe(held);
    expect(hash(14)).not.toBe(held);
    expect(hash(41)).not.toBe(held);
    // After the hold, the source goes on from where it stopped: every frame new again.
    expect(new Set(Array.from({ length: 10 }, (_, k) => hash(41 + k))).size).toBe(10);
  });

  it("the sound is silent during the hold and plays before and after it", async () => {
    expect(rms(await samplesOf(output, 0.7, 0.8))).toBeLessThan(0.001);
    expect(rms(await samplesOf(output, 0.1, 0.4))).toBeGreaterThan(0.05);
    expect(rms(await samplesOf(output, 1.8, 0.8))).toBeGreaterThan(0.05);
  });
});
