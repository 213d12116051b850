import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeSource } from "../../../encoder/ffmpeg/probe";
import { framesOf, readSplitFacts } from "../../../encoder/split/facts";
import type { FrameRate } from "../../../domain/split";
import { openRanged, serveRanges } from "../../../encoder/source/ranged";
import { declaredSamples, fileBytes, MAX_INDEXED_SAMPLES, mp4VideoPackets } from "../../../encoder/split/mp4-index";
import { startFixtureServer } from "../../e2e/fixtures";
import { ffmpeg } from "../../support/media";
import { execFile } from "node:child_process";
import { promisify } from "node:util";

/**
 * The split planner's frames read off an MP4's index (encoder/split/mp4-index.ts) against what
 * FFmpeg's own demuxer gives for the same file, packet for packet: sources as encoders and
 * stream-copy cuts leave them.
 */
let dir: string;
const at = (name: string) => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mp4-index-"));
  const tone = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"];
  await ffmpeg([
    ...["-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30000/1001"],
    ...tone,
    ...["-t", "12", "-c:v", "libx264", "-g", "48", "-b:v", "4M", "-c:a", "aac", "-shortest", at("ntsc.mp4")],
  ]);
  await Promise.all([
    ffmpeg(["-i", at("ntsc.mp4"), "-c", "copy", "-movflags", "faststart", at("faststart.mp4")]),
    // Off a keyframe: the edit list starts inside the GOP, mid-frame on the media's clock.
    ffmpeg(["-ss", "1.3", "-i", at("ntsc.mp4"), "-c", "copy", "-t", "5", at("cut.mp4")]),
    ffmpeg(["-ss", "2.71", "-i", at("ntsc.mp4"), "-c", "copy", "-t", "4", at("cut-2.mp4")]),
    ffmpeg(["-i", at("ntsc.mp4"), "-c", "copy", "-use_editlist", "0", at("no-edit-list.mp4")]),
    ffmpeg(["-i", at("ntsc.mp4"), "-c", "copy", "-movflags", "frag_keyframe+empty_moov", at("fragmented.mp4")]),
    ffmpeg(["-i", at("ntsc.mp4"), "-c", "copy", at("matroska.mkv")]),
    // The video the second track: the index's tracks are FFmpeg's streams, in order.
    ffmpeg(["-i", at("ntsc.mp4"), "-map", "0:a", "-map", "0:v", "-c", "copy", at("audio-first.mp4")]),
    ffmpeg([
      ...["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=24"],
      ...["-t", "6", "-c:v", "libx264", "-x264-params", "bframes=16:b-adapt=0:b-pyramid=none", at("b16.mp4")],
    ]),
    ffmpeg([
      ...["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25"],
      ...["-t", "4", "-c:v", "libx265", "-x265-params", "log-level=error", "-tag:v", "hvc1", at("hevc.mp4")],
    ]),
  ]);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A file's top-level moov box, found by walking the top-level boxes' sizes. */
function moovOf(file: Buffer): Uint8Array {
  for (let at = 0; at + 8 <= file.length && file.readUInt32BE(at) >= 8; at += file.readUInt32BE(at)) {
    if (file.toString("latin1", at + 4, at + 8) === "moov") return file.subarray(at, at + file.readUInt32BE(at));
  }
  throw new Error("no moov box");
}

/** What ffprobe says of the video's packets: `pts,flags` lines, in decode order. */
async function probedPackets(path: string) {
  const { stdout } = await promisify(execFile)(
    "ffprobe",
    ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,flags", "-of", "csv=p=0", path],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

/** The index reader over a file on this disk. */
async function indexedPackets(path: string, index: number, timeBase: FrameRate) {
  const bytes = await fileBytes(path);
  try {
    return await mp4VideoPackets(bytes, index, timeBase);
  } finally {
    await bytes.close();
  }
}

async function videoClock(path: string) {
  const probed = await probeSource(path);
  const clock = probed.clocks.find((c) => c.index === probed.probe.video?.index);
  const [num, den] = (clock?.timeBase ?? "").split("/").map(Number);
  return { probed, index: clock?.index ?? -1, timeBase: { num, den } };
}

describe("an MP4's frames from its index alone", () => {
  it.each([
    "ntsc.mp4",
    "faststart.mp4",
    "cut.mp4",
    "cut-2.mp4",
    "no-edit-list.mp4",
    "audio-first.mp4",
    "b16.mp4",
    "hevc.mp4",
  ])("%s: the packets FFmpeg shows, with their times and keyframes, and the same plan's facts", async (name) => {
    const path = at(name);
    const { probed, index, timeBase } = await videoClock(path);
    const indexed = await indexedPackets(path, index, timeBase);
    expect(indexed, "read from the index").not.toBeNull();
    if (name === "audio-first.mp4") expect(index).toBe(1);
    const shown = (await probedPackets(path))
      .trim()
      .split("\n")
      .filter((line) => !line.split(",")[1]?.includes("D"))
      .map((line) => {
        const [pts, flags] = line.split(",");
        return { pts: Number(pts), key: flags.includes("K") };
      });
    expect(indexed?.packets).toEqual(shown);
    const facts = await readSplitFacts(path, probed, {});
    expect(facts && { frameTimes: facts.frameTimes, keyframes: facts.keyframes }).toEqual(
      framesOf(await probedPackets(path), timeBase),
    );
  });

  it("reads the index, not the media: the moov box, a few percent of the file, whether it comes first or last", async () => {
    for (const name of ["ntsc.mp4", "faststart.mp4"]) {
      const path = at(name);
      const { index, timeBase } = await videoClock(path);
      const indexed = await indexedPackets(path, index, timeBase);
      const file = await readFile(path);
      expect(file.length, "the source is mostly media").toBeGreaterThan(4_000_000);
      expect(indexed?.indexBytes, name).toBe(moovOf(file).length);
      expect(indexed?.indexBytes, `${name}: ${indexed?.indexBytes} of ${file.length} bytes`).toBeLessThan(
        file.length * 0.05,
      );
    }
  });

  it("by ranges from the source's origin: the same packets, the origin sending the index and the boxes' headers alone", async () => {
    const origin = await startFixtureServer();
    try {
      for (const name of ["ntsc.mp4", "faststart.mp4"]) {
        await writeFile(join(origin.dir, name), await readFile(at(name)));
        const policy = { allowLoopback: true, maxBytes: 1 << 30, timeoutMs: 30_000 };
        const remote = await openRanged(origin.url(name), policy);
        if (!remote) throw new Error("the origin answers no ranges");
        const proxy = await serveRanges(remote, policy);
        const { index, timeBase } = await videoClock(at(name));
        const ranged = await mp4VideoPackets({ size: remote.size, read: proxy.read }, index, timeBase).finally(() =>
          proxy.close(),
        );
        expect(ranged, name).toEqual(await indexedPackets(at(name), index, timeBase));
        // The probe's first byte, each top-level box's 16-byte header, the file type box, the index.
        const moov = moovOf(await readFile(at(name))).length;
        expect(origin.bytesServed(`/${name}`), name).toBeGreaterThanOrEqual(moov);
        expect(origin.bytesServed(`/${name}`), name).toBeLessThan(moov + 1024);
      }
    } finally {
      await origin.stop();
    }
  });

  it("counts the samples an index declares before building any: every track's, as FFmpeg counts them", async () => {
    const file = await readFile(at("faststart.mp4"));
    const { stdout } = await promisify(execFile)("ffprobe", [
      ...["-v", "error", "-show_entries", "stream=nb_frames", "-of", "csv=p=0", at("faststart.mp4")],
    ]);
    const counts = stdout.trim().split("\n").map(Number);
    expect(counts).toHaveLength(2);
    expect(declaredSamples(moovOf(file))).toBe(counts[0] + counts[1]);
  });

  it(`an index that claims more than ${MAX_INDEXED_SAMPLES} samples (a long source, or a forged count) is left to the packet scan, nothing built for it`, async () => {
    const file = await readFile(at("faststart.mp4"));
    // The video's sample count, 16 bytes into its stsz box, forged to ten million.
    const stsz = file.indexOf("stsz") - 4;
    file.writeUInt32BE(10_000_000, stsz + 16);
    const forged = at("forged-count.mp4");
    await writeFile(forged, file);
    expect(declaredSamples(moovOf(file))).toBeGreaterThan(10_000_000);
    const { index, timeBase } = await videoClock(at("faststart.mp4"));
    const heap = process.memoryUsage().heapUsed;
    expect(await indexedPackets(forged, index, timeBase)).toBeNull();
    expect(process.memoryUsage().heapUsed - heap, "heap taken").toBeLessThan(64 * 1024 * 1024);
  });

  it("what it does not follow (a fragmented MP4, a Matroska file): null, and the facts come from ffprobe's packets", async () => {
    for (const name of ["fragmented.mp4", "matroska.mkv"]) {
      const path = at(name);
      const { probed, index, timeBase } = await videoClock(path);
      expect(await indexedPackets(path, index, timeBase), name).toBeNull();
      const facts = await readSplitFacts(path, probed, {});
      expect(facts?.frameTimes.length, name).toBe(framesOf(await probedPackets(path), timeBase)?.frameTimes.length);
      expect(facts?.frameTimes.length, name).toBeGreaterThan(300);
    }
  });
});
