import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeNumberedSource } from "../../support/frame-numbers.ts";
import { keyframesOf, segmentsOffKeyframes } from "../../support/keyframes.ts";
import { ffmpeg } from "../../support/media.ts";

let dir: string;
let source: string;

/**
 * The source cut into 1 s HLS segments of `type`, in a folder of its own. FFmpeg's HLS muxer cuts
 * only at key frames unless split_by_time makes it cut on the clock, at whatever frame is there.
 */
async function hls(name: string, type: "mpegts" | "fmp4", input: string, onTheClock: boolean): Promise<string> {
  await mkdir(join(dir, name));
  const playlist = join(dir, name, "index.m3u8");
  await ffmpeg([
    "-i",
    input,
    "-c",
    "copy",
    "-f",
    "hls",
    "-hls_time",
    "1",
    "-hls_playlist_type",
    "vod",
    "-hls_segment_type",
    type,
    ...(onTheClock ? ["-hls_flags", "split_by_time"] : []),
    playlist,
  ]);
  return playlist;
}

afterAll(() => rm(dir, { recursive: true, force: true }));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "keyframes-"));
  source = join(dir, "source.mp4");
  await makeNumberedSource(source, {
    seconds: 3,
    fps: { num: 30000, den: 1001 },
    width: 320,
    height: 180,
    audio: true,
    keyframeSeconds: 1,
  });
});

describe("keyframesOf", () => {
  it("lists the source's key frames, one a second (30 frames at 29.97 fps)", async () => {
    const keyframes = await keyframesOf(source);
    expect(keyframes.map((k) => k.frame)).toEqual([0, 30, 60]);
    expect(keyframes.map((k) => k.time)).toEqual([0, 1.001, 2.002]);
  });
});

describe("segmentsOffKeyframes", () => {
  it("passes segments cut at key frames, in MPEG-TS and fMP4, through a master playlist too", async () => {
    const ts = await hls("ts", "mpegts", source, false);
    expect(await segmentsOffKeyframes(ts)).toEqual([]);
    const fmp4 = await hls("fmp4", "fmp4", source, false);
    expect(await segmentsOffKeyframes(fmp4)).toEqual([]);
    const master = join(dir, "master.m3u8");
    await writeFile(
      master,
      "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=500000\nts/index.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=400000\nfmp4/index.m3u8\n",
    );
    expect(await segmentsOffKeyframes(master)).toEqual([]);
  });

  it("names segments that start between key frames, in MPEG-TS and fMP4", async () => {
    const sparse = join(dir, "sparse.mp4");
    await makeNumberedSource(sparse, {
      seconds: 3,
      fps: { num: 30000, den: 1001 },
      width: 320,
      height: 180,
      audio: false,
      keyframeSeconds: 3,
    });
    const ts = await hls("ts-off", "mpegts", sparse, true);
    expect(await segmentsOffKeyframes(ts)).toEqual([`${ts}: index1.ts`, `${ts}: index2.ts`]);
    const fmp4 = await hls("fmp4-off", "fmp4", sparse, true);
    expect(await segmentsOffKeyframes(fmp4)).toEqual([`${fmp4}: index1.m4s`, `${fmp4}: index2.m4s`]);
  });
});
