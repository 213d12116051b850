import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeNumberedSource, readFrameNumbers } from "../../support/frame-numbers.ts";
import { frameOrderProblem } from "../../support/frame-order.ts";
import { keyframesOf } from "../../support/keyframes.ts";
import { audioDiscontinuities } from "../../support/audio-continuity.ts";
import { ffmpeg } from "../../support/media.ts";

/** 3 s at 29.97 fps: 90 frames. */
const FRAMES = 90;
let dir: string;
let source: string;

/** Re-encodes the source as a lossy, small output would be, through `filter`. */
async function reencode(name: string, filter: string, codec: string[]): Promise<string> {
  const path = join(dir, name);
  await ffmpeg(["-i", source, "-an", "-vf", filter, "-fps_mode", "passthrough", ...codec, path]);
  return path;
}
const LOW_H264 = ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "38"];

afterAll(() => rm(dir, { recursive: true, force: true }));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "frame-numbers-"));
  source = join(dir, "source.mp4");
  await makeNumberedSource(source, {
    seconds: 3,
    fps: { num: 30000, den: 1001 },
    width: 640,
    height: 360,
    audio: true,
    keyframeSeconds: 1,
  });
});

describe("makeNumberedSource and readFrameNumbers", () => {
  it("read every frame's number from the source", async () => {
    expect(await readFrameNumbers(source)).toEqual(Array.from({ length: FRAMES }, (_, i) => i));
  });

  it("read them through a low-quality 240p H.264 encode, VP9 in WebM and HLS playlists (TS and fMP4)", async () => {
    const small = await reencode("small.mp4", "scale=-2:240", LOW_H264);
    expect(frameOrderProblem(await readFrameNumbers(small), FRAMES)).toBeNull();
    const webm = await reencode("small.webm", "scale=-2:240", [
      "-c:v",
      "libvpx-vp9",
      "-deadline",
      "realtime",
      "-cpu-used",
      "8",
      "-b:v",
      "150k",
    ]);
    expect(frameOrderProblem(await readFrameNumbers(webm), FRAMES)).toBeNull();
    const playlist = join(dir, "hls.m3u8");
    await ffmpeg(["-i", source, "-c", "copy", "-f", "hls", "-hls_time", "1", "-hls_playlist_type", "vod", playlist]);
    expect(frameOrderProblem(await readFrameNumbers(playlist), FRAMES)).toBeNull();
    const fmp4 = join(dir, "fmp4.m3u8");
    await ffmpeg([
      "-i",
      source,
      "-c",
      "copy",
      "-f",
      "hls",
      "-hls_time",
      "1",
      "-hls_segment_type",
      "fmp4",
      "-hls_fmp4_init_filename",
      "fmp4-init.mp4",
      "-hls_segment_filename",
      join(dir, "fmp4-%d.m4s"),
      fmp4,
    ]);
    expect(frameOrderProblem(await readFrameNumbers(fmp4), FRAMES)).toBeNull();
  });

  it("make a VP9 and Opus source in WebM, its frames numbered and its tone unbroken", async () => {
    const webm = join(dir, "numbered.webm");
    await makeNumberedSource(webm, {
      seconds: 1,
      fps: { num: 25, den: 1 },
      // Not a multiple of the 16 bits: the blocks share the width out unevenly.
      width: 426,
      height: 240,
      audio: true,
      keyframeSeconds: 0.4,
      codec: "vp9",
    });
    expect(await readFrameNumbers(webm)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect((await keyframesOf(webm)).map((k) => k.frame)).toEqual([0, 10, 20]);
    expect(await audioDiscontinuities(webm, { toneHz: 440 })).toEqual([]);
  });

  it("show a dropped frame and a repeated one", async () => {
    const dropped = await reencode("dropped.mp4", "select='not(eq(n,40))',setpts=N/FRAME_RATE/TB", LOW_H264);
    expect(frameOrderProblem(await readFrameNumbers(dropped), FRAMES)).toBe(
      "source frame 40 is missing (output frame 40 shows source frame 41)",
    );
    const repeated = await reencode("repeated.mp4", "loop=loop=1:size=1:start=40,setpts=N/FRAME_RATE/TB", LOW_H264);
    const numbers = await readFrameNumbers(repeated);
    expect(numbers).toHaveLength(FRAMES + 1);
    // Which frame the loop filter repeats (the 40th or the 41st) is its own affair; the tool must name it.
    expect(frameOrderProblem(numbers, FRAMES)).toMatch(
      /^source frame (39|40) is shown twice, as output frames (39 and 40|40 and 41)$/,
    );
  });

  it("read a frame without the barcode as unreadable, not as a number", async () => {
    const black = await reencode("black.mp4", "drawbox=t=fill:color=black:enable='eq(n,10)'", LOW_H264);
    const numbers = await readFrameNumbers(black);
    expect(numbers[10]).toBeNull();
    expect(frameOrderProblem(numbers, FRAMES)).toBe("output frame 10 shows no readable frame number");
  });
});
