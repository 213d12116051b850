import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SplitPlan } from "../../../domain/split";
import { encodePreset } from "../../../encoder/ffmpeg/encode";
import { probeFile } from "../../../encoder/ffmpeg/probe";
import { makeNumberedSource, readFrameNumbers } from "../../support/frame-numbers";
import { frameOrderProblem } from "../../support/frame-order";
import { splitLocally } from "../../support/split-locally";
import { ffprobeJson } from "../../support/media";

const run = promisify(execFile);

/**
 * Split encodes, checked on content (docs/scaling.md): small sources with low thresholds (a 12 s
 * 360p source in parts of about 2 s), so the whole path runs in seconds. The distributed path
 * (storage, the Worker, several encoders) is test/e2e/split.test.ts's.
 */
const SETTINGS = { minSeconds: 4, partSeconds: 2 };
const NTSC = { num: 30000, den: 1001 };

let dir: string;
let source: string;
/** For the presets that encode at 1080p whatever the source (HEVC, VP9): two parts' worth. */
let short: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "split-encode-"));
  source = join(dir, "numbered.mp4");
  short = join(dir, "short.mp4");
  await Promise.all([
    makeNumberedSource(source, { seconds: 12, fps: NTSC, width: 640, height: 360, audio: true }),
    makeNumberedSource(short, { seconds: 4.2, fps: NTSC, width: 640, height: 360, audio: true }),
  ]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function encode(presetId: string, name: string, from = source) {
  const out = await mkdtemp(join(dir, `${name}-`));
  const result = await splitLocally(from, presetId, out, SETTINGS);
  if (!result.plan) throw new Error(`${presetId} did not split`);
  return { ...result, plan: result.plan as SplitPlan, path: join(result.outDir, result.file) };
}

/** Times of the video's key frames, from the packets' flags. */
async function keyframeTimes(path: string): Promise<number[]> {
  const { stdout } = await run("ffprobe", [
    "-v",
    "error",
    "-select_streams",
    "v:0",
    "-show_entries",
    "packet=pts_time,flags",
    "-of",
    "csv=p=0",
    path,
  ]);
  return stdout
    .split("\n")
    .filter((line) => line.split(",")[1]?.startsWith("K"))
    .map((line) => Number(line.split(",")[0]));
}

describe("a split H.264 MP4 (mp4_264_480p)", () => {
  let encoded: Awaited<ReturnType<typeof encode>>;
  beforeAll(async () => {
    encoded = await encode("mp4_264_480p", "h264");
  });

  it("holds every source frame once, in order, and as many frames as the source", async () => {
    expect(encoded.plan.parts.length).toBeGreaterThanOrEqual(3);
    const numbers = await readFrameNumbers(encoded.path);
    expect(frameOrderProblem(numbers, encoded.plan.totalFrames)).toBeNull();
  });

  it("starts every part on a key frame", async () => {
    const keys = await keyframeTimes(encoded.path);
    for (const part of encoded.plan.parts) {
      const at = (part.firstFrame * NTSC.den) / NTSC.num;
      expect(
        keys.some((k) => Math.abs(k - at) < 0.001),
        `part ${part.index} at ${at} s`,
      ).toBe(true);
    }
  });

  it("keeps the audio to the video's length", async () => {
    const probe = await probeFile(encoded.path);
    expect(probe.audio).toHaveLength(1);
    const info = await ffprobeJson(encoded.path);
    const length = (type: string) => Number(info.streams.find((s) => s.codec_type === type)?.duration);
    expect(Math.abs(length("audio") - length("video"))).toBeLessThanOrEqual(NTSC.den / NTSC.num);
  });
});

/** The same preset, encoded whole by the encoder's own path. */
async function unsplit(presetId: string, name: string, from = source) {
  const outDir = await mkdtemp(join(dir, `${name}-whole-`));
  const probe = await probeFile(from);
  const output = await encodePreset({ presetId, input: from, outDir, probe });
  return output.kind === "file" ? output.path : outDir;
}

async function bytesOf(path: string): Promise<number> {
  const info = await stat(path);
  if (info.isFile()) return info.size;
  const entries = await readdir(path, { recursive: true, withFileTypes: true });
  let total = 0;
  for (const e of entries) if (e.isFile()) total += (await stat(join(e.parentPath, e.name))).size;
  return total;
}

describe("the same size as unsplit", () => {
  it("H.264 MP4: within 5% of the whole encode's bytes", async () => {
    const [split, whole] = await Promise.all([encode("mp4_264_480p", "h264-size"), unsplit("mp4_264_480p", "h264")]);
    const ratio = (await bytesOf(split.path)) / (await bytesOf(whole));
    expect(ratio, `split/whole = ${ratio.toFixed(3)}`).toBeGreaterThan(0.95);
    expect(ratio, `split/whole = ${ratio.toFixed(3)}`).toBeLessThan(1.05);
  });

  it("H.265 MP4 (x265 with closed GOPs): every frame once, in order, within 5% of the whole encode's bytes", async () => {
    const split = await encode("mp4_265_1080p_efficient", "hevc", short);
    expect(frameOrderProblem(await readFrameNumbers(split.path), split.plan.totalFrames)).toBeNull();
    const ratio =
      (await bytesOf(split.path)) / (await bytesOf(await unsplit("mp4_265_1080p_efficient", "hevc", short)));
    expect(ratio, `split/whole = ${ratio.toFixed(3)}`).toBeGreaterThan(0.95);
    expect(ratio, `split/whole = ${ratio.toFixed(3)}`).toBeLessThan(1.05);
  }, 300_000);
});

describe("other codecs", () => {
  it("VP9 in WebM: every frame once, in order", async () => {
    const encoded = await encode("webm_vp9_1080p", "vp9", short);
    expect(frameOrderProblem(await readFrameNumbers(encoded.path), encoded.plan.totalFrames)).toBeNull();
  }, 300_000);
});
