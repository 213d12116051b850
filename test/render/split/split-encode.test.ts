import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AwsClient } from "aws4fetch";
import { scratchPrefix, type SplitPlan } from "../../../domain/split";
import { encodePreset } from "../../../encoder/ffmpeg/encode";
import { probeFile, probeSource } from "../../../encoder/ffmpeg/probe";
import { encodeWholeStream, layoutFor } from "../../../encoder/stream/whole";
import { renditionName, streamRecipe, streamRungs } from "../../../domain/stream/layout";
import { streamLocally } from "../../support/stream-locally";
import { makeNumberedSource, readFrameNumbers } from "../../support/frame-numbers";
import { frameOrderProblem } from "../../support/frame-order";
import { localSplitter } from "../../support/split-locally";
import { type FixtureServer, startFixtureServer } from "../../e2e/fixtures";
import { startS3Server } from "../../../dev/cloud/s3-server";
import {
  audioDiscontinuities,
  audioEndVsVideoEnd,
  audioStartVsVideoStart,
  firstLoudSampleAt,
} from "../../support/audio-continuity";
import { ssimAt } from "../../support/cut-quality";
import { keyframesOf, type Reordering, reorderingOf, segmentsOffKeyframes } from "../../support/keyframes";
import { parseM3u8 } from "../../support/outputs";
import { ffmpeg, ffprobeJson, topLevelBoxes } from "../../support/media";

/**
 * Split encodes, checked on content (docs/scaling.md): small sources with low thresholds (a 12 s
 * 360p source in parts of about 2 s), through the encoder's own planning, parts and join against
 * the local S3 server (test/support/split-locally.ts). Sources are read as an origin serving byte
 * ranges serves them (every task its own span), unless a test cuts them into stored pieces, as a
 * source from an origin without ranges is. The distributed path (the Worker, QStash, several
 * encoders) is test/e2e/split.test.ts's.
 */
const SETTINGS = { minSeconds: 4, partSeconds: 2 };
const NTSC = { num: 30000, den: 1001 };

let dir: string;
let origin: FixtureServer;
let s3: Awaited<ReturnType<typeof startS3Server>>;
let splitLocally: ReturnType<typeof localSplitter>;
let source: string;
/** For the presets that encode at 1080p whatever the source (HEVC, VP9): two parts' worth. */
let short: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "split-encode-"));
  origin = await startFixtureServer(dir);
  s3 = await startS3Server({ host: "127.0.0.1", directory: join(dir, "s3"), bucket: "outputs" });
  splitLocally = localSplitter({ ...s3, bucket: "outputs" });
  source = join(dir, "numbered.mp4");
  short = join(dir, "short.mp4");
  await Promise.all([
    makeNumberedSource(source, { seconds: 12, fps: NTSC, width: 640, height: 360, audio: true }),
    makeNumberedSource(short, { seconds: 4.2, fps: NTSC, width: 640, height: 360, audio: true }),
  ]);
});
afterAll(async () => {
  await origin?.stop();
  await s3?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** How the tasks read the source: by ranges from its origin, or from pieces cut and stored. */
type Reading = "ranges" | "pieces";

async function encode(presetId: string, name: string, from = source, reading: Reading = "ranges", settings = SETTINGS) {
  const out = await mkdtemp(join(dir, `${name}-`));
  const result = await splitLocally(reading === "ranges" ? origin.url(basename(from)) : from, presetId, out, settings);
  if (!result.plan) throw new Error(`${presetId} did not split`);
  return { ...result, plan: result.plan as SplitPlan, path: join(result.outDir, result.file) };
}

/** The keys the local S3 server holds under `prefix`. */
async function storedKeys(prefix: string): Promise<string[]> {
  const aws = new AwsClient({ accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, service: "s3" });
  const res = await aws.fetch(`${s3.endpoint}/outputs?list-type=2&prefix=${encodeURIComponent(prefix)}`);
  return [...(await res.text()).matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1]);
}

/** Each encode made once, on first use, and read by every test that checks it. */
const made = new Map<string, Promise<unknown>>();
function once<T>(key: string, make: () => Promise<T>): Promise<T> {
  if (!made.has(key)) made.set(key, make());
  return made.get(key) as Promise<T>;
}
/** The split H.264 MP4 (mp4_264_480p) of the 12 s source, read by ranges. */
const splitH264 = () => once("split h264", () => encode("mp4_264_480p", "h264"));
/** The same from stored pieces, without kept scratch. */
const splitH264Pieces = () => once("split h264 pieces", () => encode("mp4_264_480p", "h264-pieces", source, "pieces"));
/** The split H.265 MP4 (mp4_265_1080p_efficient) of the 4.2 s source. */
const splitHevc = () => once("split hevc", () => encode("mp4_265_1080p_efficient", "hevc", short));

describe("a split H.264 MP4 (mp4_264_480p)", () => {
  let encoded: Awaited<ReturnType<typeof encode>>;
  beforeAll(async () => {
    encoded = await splitH264();
  });

  it("holds every source frame once, in order, and as many frames as the source", async () => {
    expect(encoded.plan.parts.length).toBeGreaterThanOrEqual(3);
    const numbers = await readFrameNumbers(encoded.path);
    expect(frameOrderProblem(numbers, encoded.plan.totalFrames)).toBeNull();
  });

  it("starts every part on a key frame", async () => {
    const keys = (await keyframesOf(encoded.path)).map((k) => k.frame);
    for (const part of encoded.plan.parts) expect(keys, `part ${part.index}`).toContain(part.firstFrame);
  });

  it("has no discontinuity in its audio at any cut: no jump beyond the tone's, no silent gap", async () => {
    expect(await audioDiscontinuities(encoded.path, { toneHz: 440 })).toEqual([]);
  });

  it("the frames at each cut are as good as the interior's (SSIM within 0.005 of the mean)", async () => {
    const cuts = encoded.plan.parts.slice(1).flatMap((p) => [p.firstFrame - 1, p.firstFrame]);
    const { at, interiorMean } = await ssimAt(encoded.path, source, cuts);
    for (const [i, value] of at.entries()) {
      expect(value, `frame ${cuts[i]}: ${value} against ${interiorMean}`).toBeGreaterThanOrEqual(interiorMean - 0.005);
    }
  });

  it("starts its audio where the whole encode starts it, against the video (within a millisecond)", async () => {
    const whole = await unsplit("mp4_264_480p", "h264");
    const [split, reference] = await Promise.all([audioStartVsVideoStart(encoded.path), audioStartVsVideoStart(whole)]);
    expect(Math.abs(split - reference), `split ${split} s, whole ${reference} s`).toBeLessThanOrEqual(0.001);
  });

  it("keeps the audio to the video's length", async () => {
    const probe = await probeFile(encoded.path);
    expect(probe.audio).toHaveLength(1);
    expect(Math.abs(await audioEndVsVideoEnd(encoded.path))).toBeLessThanOrEqual(NTSC.den / NTSC.num);
  });

  it("its tasks read the source from the origin (its index at the end), storage holding nothing but their outputs", async () => {
    const boxes = await topLevelBoxes(source);
    expect(boxes.indexOf("moov"), "the index after the media").toBeGreaterThan(boxes.indexOf("mdat"));
    expect(encoded.plan.ranges).toEqual({ videoIndex: 0 });
    for (const [task, stages] of encoded.tasksLog.entries())
      expect(
        stages.filter((s) => s.stage === "download"),
        `task ${task}`,
      ).toEqual([expect.objectContaining({ bytes: expect.any(Number) })]);
    const stored = await storedKeys(scratchPrefix(encoded.jobId));
    expect(stored.length, "the tasks' outputs are stored").toBe(encoded.plan.parts.length + 1);
    expect(
      stored.filter((key) => !key.includes("/out/")),
      "and nothing else",
    ).toEqual([]);
  });
});

describe("parts that read the source by ranges (docs/scaling.md#parts-that-read-the-source-by-ranges)", () => {
  it("each reads its own span: on an 80 MB source in 4 parts, a part's reads stay under half the source, all four's under 1.5 times it", async () => {
    // Noise keeps the picture from compressing: 320x240 at 16 Mbit/s, 40 s, a keyframe every 2 s.
    const big = join(dir, "big.mp4");
    await ffmpeg([
      ...["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25,noise=alls=60:allf=t", "-t", "40"],
      ...["-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-b:v", "16M", big],
    ]);
    const { size } = await stat(big);
    expect(size).toBeGreaterThan(60_000_000);
    const encoded = await encode("mp4_264_240p", "big", big, "ranges", { minSeconds: 4, partSeconds: 10 });
    expect(encoded.plan.parts).toHaveLength(4);
    const read = encoded.tasksLog.map((stages) => stages.flatMap((s) => (s.stage === "download" ? [s.bytes] : [])));
    for (const [task, [bytes]] of read.entries())
      expect(bytes, `part ${task}: ${bytes} of ${size} bytes`).toBeLessThan(size / 2);
    const total = read.reduce((sum, [bytes]) => sum + bytes, 0);
    expect(total, `the parts read ${total} of ${size} bytes`).toBeLessThan(1.5 * size);
    // The rest of what the origin sent went to the plan: the probe and the index.
    const planned = origin.bytesServed("/big.mp4") - total;
    expect(planned, `the plan read ${planned} bytes`).toBeGreaterThan(0);
    expect(planned, `the plan read ${planned} bytes`).toBeLessThan(size / 10);
  });
});

describe("scratch kept where it was made (docs/scaling.md#scratch-kept-where-it-was-made)", () => {
  it("tasks on the encoder that cut their inputs read them from its disk, a join there the parts it encoded; the output holds every frame once", async () => {
    const out = await mkdtemp(join(dir, "kept-"));
    const kept = await localSplitter({ ...s3, bucket: "outputs" }, { keep: true })(
      source,
      "mp4_264_480p",
      out,
      SETTINGS,
    );
    const plan = kept.plan as SplitPlan;
    const downloads = kept.tasksLog.map((stages) => stages.filter((s) => s.stage === "download"));
    expect(downloads).toHaveLength(plan.parts.length + 1);
    for (const [task, lines] of downloads.entries()) {
      expect(lines, `task ${task}`).toEqual([expect.objectContaining({ onDisk: true })]);
    }
    // Every part and the audio were encoded here: the join downloads nothing.
    expect(kept.joinLog.filter((s) => s.stage === "download")).toEqual([expect.objectContaining({ bytes: 0 })]);
    expect(frameOrderProblem(await readFrameNumbers(join(kept.outDir, kept.file)), plan.totalFrames)).toBeNull();
    expect(await audioDiscontinuities(join(kept.outDir, kept.file), { toneHz: 440 })).toEqual([]);
    // Each file taken is deleted once used.
    expect(await readdir(join(out, "kept"))).toEqual([]);
  });

  it("without them, every task downloads its input from storage, and the join the parts; the output holds every frame once", async () => {
    const downloaded = await splitH264Pieces();
    expect(frameOrderProblem(await readFrameNumbers(downloaded.path), downloaded.plan.totalFrames)).toBeNull();
    expect(await audioDiscontinuities(downloaded.path, { toneHz: 440 })).toEqual([]);
    const [joinDownload] = downloaded.joinLog.filter((s) => s.stage === "download");
    expect(joinDownload).toMatchObject({ bytes: expect.any(Number) });
    expect((joinDownload as { bytes: number }).bytes).toBeGreaterThan(0);
    for (const stages of downloaded.tasksLog) {
      expect(stages.filter((s) => s.stage === "download")).toEqual([expect.not.objectContaining({ onDisk: true })]);
    }
  });
});

/** The same preset, encoded whole by the encoder's own path (once for each preset and source). */
function unsplit(presetId: string, name: string, from = source) {
  return once(`whole ${presetId} ${from}`, async () => {
    const outDir = await mkdtemp(join(dir, `${name}-whole-`));
    const probe = await probeFile(from);
    const output = await encodePreset({ presetId, input: from, outDir, probe });
    return output.kind === "file" ? output.path : outDir;
  });
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
    const [split, whole] = await Promise.all([splitH264(), unsplit("mp4_264_480p", "h264")]);
    const ratio = (await bytesOf(split.path)) / (await bytesOf(whole));
    expect(ratio, `split/whole = ${ratio.toFixed(3)}`).toBeGreaterThan(0.95);
    expect(ratio, `split/whole = ${ratio.toFixed(3)}`).toBeLessThan(1.05);
  });

  it("H.265 MP4 (x265 with closed GOPs): every frame once, in order, within 5% of the whole encode's bytes", async () => {
    const split = await splitHevc();
    expect(frameOrderProblem(await readFrameNumbers(split.path), split.plan.totalFrames)).toBeNull();
    const ratio =
      (await bytesOf(split.path)) / (await bytesOf(await unsplit("mp4_265_1080p_efficient", "hevc", short)));
    expect(ratio, `split/whole = ${ratio.toFixed(3)}`).toBeGreaterThan(0.95);
    expect(ratio, `split/whole = ${ratio.toFixed(3)}`).toBeLessThan(1.05);
  }, 300_000);
});

describe("the join's packaging", () => {
  it.each([
    ["mp4_264_480p", "avc1", splitH264, source],
    ["mp4_265_1080p_efficient", "hvc1", splitHevc, short],
  ] as const)(
    "%s: the index before the media (faststart) and the %s sample entry, as the whole encode has them",
    async (presetId, tag, split, from) => {
      const [joined, whole] = await Promise.all([split(), unsplit(presetId, presetId, from)]);
      const [boxes, wholeBoxes, probe] = await Promise.all([
        topLevelBoxes(joined.path),
        topLevelBoxes(whole),
        ffprobeJson(joined.path),
      ]);
      expect(boxes.indexOf("moov"), boxes.join(" ")).toBeGreaterThan(-1);
      expect(boxes.indexOf("moov"), boxes.join(" ")).toBeLessThan(boxes.indexOf("mdat"));
      expect(boxes.filter((b) => b === "moov" || b === "mdat")).toEqual(
        wholeBoxes.filter((b) => b === "moov" || b === "mdat"),
      );
      const video = probe.streams.find((s) => s.codec_type === "video");
      expect(video?.codec_tag_string).toBe(tag);
      expect(probe.streams.find((s) => s.codec_type === "audio")?.codec_tag_string).toBe("mp4a");
    },
    300_000,
  );
});

describe("other codecs and containers", () => {
  it("VP9 in WebM: every frame once, in order, and its Opus audio unbroken", async () => {
    const encoded = await encode("webm_vp9_1080p", "vp9", short);
    expect(frameOrderProblem(await readFrameNumbers(encoded.path), encoded.plan.totalFrames)).toBeNull();
    expect((await probeFile(encoded.path)).audio.map((a) => a.codec)).toEqual(["opus"]);
    expect(await audioDiscontinuities(encoded.path, { toneHz: 440 })).toEqual([]);
  }, 300_000);

  it("a Matroska source, planned from a scan of its packets: every frame once, in order, and the audio unbroken", async () => {
    const mkv = join(dir, "numbered.mkv");
    await ffmpeg(["-i", source, "-c", "copy", mkv]);
    const encoded = await encode("mp4_264_240p", "matroska", mkv);
    expect(encoded.plan.ranges).toBeDefined();
    expect(frameOrderProblem(await readFrameNumbers(encoded.path), encoded.plan.totalFrames)).toBeNull();
    const whole = await unsplit("mp4_264_240p", "matroska", mkv);
    const [split, reference] = await Promise.all([audioStartVsVideoStart(encoded.path), audioStartVsVideoStart(whole)]);
    expect(Math.abs(split - reference), `split ${split} s, whole ${reference} s`).toBeLessThanOrEqual(0.001);
    // Matroska's AAC has no edit list to end it: the sound stops within a frame of the video's end, as the whole encode's does.
    const frame = NTSC.den / NTSC.num;
    const end = encoded.plan.totalFrames * frame;
    const breaks = await audioDiscontinuities(encoded.path, { toneHz: 440 });
    expect(breaks.filter((b) => b.at < end - frame)).toEqual([]);
  });
});

/**
 * A stream's parts (docs/playback.md#how-a-stream-is-made): each reads its span of the source and
 * writes its own segments, the audio a rendition of its own; together they must be the stream one
 * encode would make. Parts of 4 s (the opening ones shorter) over a 16 s source.
 */
describe("streams made in parts", () => {
  const PART_SECONDS = 4;
  let streamSource: string;
  beforeAll(async () => {
    streamSource = join(dir, "stream.mp4");
    await makeNumberedSource(streamSource, { seconds: 16, fps: NTSC, width: 854, height: 480, audio: true });
  });
  const inParts = (presetId: string) =>
    once(`stream ${presetId}`, async () => {
      const out = await mkdtemp(join(dir, `${presetId}-`));
      return { out, ...(await streamLocally(streamSource, presetId, out, PART_SECONDS)) };
    });

  it.each([
    "hls_abr_264_basic",
    "dash_abr_264_standard",
    "hls_abr_265_efficient_4k",
    "cmaf_abr_265_standard",
    "hls_abr_av1_efficient",
  ])(
    "%s: every rung holds every frame once, in order; every segment starts on a key frame; the audio is unbroken",
    async (presetId) => {
      const { out, plan } = await inParts(presetId);
      expect(plan.parts.length).toBeGreaterThanOrEqual(3);
      const recipe = streamRecipe(presetId)!;
      const manifest = recipe.packaging.format;
      const mpd = join(out, "manifest.mpd");
      const master = join(out, "master.m3u8");
      // The MPD is read at its first representation, HLS at each rung the ladder keeps for a 480p source.
      const playlists = manifest === "dash" ? [mpd] : await rungPlaylists(master);
      if (manifest !== "dash") {
        expect(
          playlists.map((p) => basename(dirname(p))),
          presetId,
        ).toEqual(streamRungs(recipe, 480).map(renditionName));
        expect(await segmentsOffKeyframes(master)).toEqual([]);
      }
      if (manifest === "cmaf") playlists.push(mpd);
      // The sample entry a player is told by CODECS: `hvc1` for HEVC (Apple's), `av01` for AV1.
      const tags: Record<string, string> = {
        cmaf_abr_265_standard: "hvc1",
        hls_abr_265_efficient_4k: "hvc1",
        hls_abr_av1_efficient: "av01",
      };
      if (tags[presetId]) {
        const probed = await ffprobeJson(playlists[0]);
        expect(probed.streams.find((s) => s.codec_type === "video")?.codec_tag_string, presetId).toBe(tags[presetId]);
      }
      for (const playlist of playlists) {
        expect(
          frameOrderProblem(await readFrameNumbers(playlist), plan.totalFrames),
          `${presetId} ${playlist}`,
        ).toBeNull();
      }
      expect(await audioDiscontinuities(manifest === "dash" ? mpd : master, { toneHz: 440 })).toEqual([]);
    },
  );

  /** The media playlist of each variant an HLS master lists. */
  async function rungPlaylists(master: string) {
    const { playlists = [] } = parseM3u8(await readFile(master, "utf8"));
    return playlists.map(({ uri }) => join(dirname(master), uri));
  }

  it("hls_abr_264_basic: the same size as the whole encode, within 5%, and the same variants with the same BANDWIDTH", async () => {
    const [split, whole] = await Promise.all([inParts("hls_abr_264_basic"), wholeStream("hls_abr_264_basic")]);
    const ratio = (await bytesOf(split.out)) / (await bytesOf(whole));
    expect(ratio, `split/whole = ${ratio.toFixed(3)}`).toBeGreaterThan(0.95);
    expect(ratio, `split/whole = ${ratio.toFixed(3)}`).toBeLessThan(1.05);
    const variants = async (at: string) =>
      (await readFile(join(at, "master.m3u8"), "utf8")).match(/BANDWIDTH=\d+[^\n]*\n[^\n]+/g);
    const reference = await variants(whole);
    expect(reference?.length, "the whole encode's variants").toBe(2);
    expect(await variants(split.out)).toEqual(reference);
  });

  it("hls_abr_264_basic: no segment of any rung, at a part's start or elsewhere, peaks above its variant's BANDWIDTH", async () => {
    const [split, whole] = await Promise.all([inParts("hls_abr_264_basic"), wholeStream("hls_abr_264_basic")]);
    const [splitPeaks, wholePeaks] = await Promise.all([segmentPeaks(split.out), segmentPeaks(whole)]);
    expect(splitPeaks.map((p) => p.rung)).toEqual(["480p", "360p"]);
    for (const [i, { rung, bandwidth, peak, at }] of splitPeaks.entries()) {
      expect(peak, `${rung}: ${at} at ${peak} bit/s against BANDWIDTH=${bandwidth}`).toBeLessThanOrEqual(bandwidth);
      // A part's start, encoded without the frames before it, must not cost more than the whole encode's worst segment.
      expect(peak, `${rung}: split ${peak} bit/s, whole ${wholePeaks[i].peak}`).toBeLessThanOrEqual(
        wholePeaks[i].peak * 1.05,
      );
    }
  });

  /** Each variant's BANDWIDTH, and its media segments' highest bit rate (size over EXTINF duration), as HLS defines BANDWIDTH. */
  async function segmentPeaks(at: string) {
    const { playlists = [] } = parseM3u8(await readFile(join(at, "master.m3u8"), "utf8"));
    return Promise.all(
      playlists.map(async ({ uri, attributes }) => {
        const rung = dirname(uri);
        const { segments } = parseM3u8(await readFile(join(at, uri), "utf8"));
        expect(segments.length, `${rung}'s segments`).toBeGreaterThan(0);
        const rates = await Promise.all(
          segments.map(async (s) => ({
            at: s.uri,
            rate: Math.round(((await stat(join(at, rung, s.uri))).size * 8) / s.duration),
          })),
        );
        const highest = rates.reduce((a, b) => (b.rate > a.rate ? b : a));
        return { rung, bandwidth: attributes.BANDWIDTH ?? 0, peak: highest.rate, at: highest.at };
      }),
    );
  }

  /** The same stream made by one encode, for comparison (once for each preset). */
  const wholeStream = (presetId: string) => once(`whole stream ${presetId}`, () => encodeStreamWhole(presetId));
  async function encodeStreamWhole(presetId: string) {
    const out = await mkdtemp(join(dir, `${presetId}-whole-`));
    const recipe = streamRecipe(presetId)!;
    const probed = await probeSource(streamSource);
    await encodeWholeStream({
      presetId,
      recipe,
      source: { input: { path: streamSource }, probed },
      layout: layoutFor(recipe, probed)!,
      outDir: out,
      publish: { keyPrefix: "", store: async () => undefined, report: async () => undefined },
      run: {},
      onPublishError: () => undefined,
    });
    return out;
  }
});

describe("awkward sources: split correctly, or encoded whole", () => {
  it("keyframes 20 s apart: each part decodes from the key frame before it, and every frame is there once", async () => {
    const sparse = join(dir, "sparse.mp4");
    await makeNumberedSource(sparse, {
      seconds: 24,
      fps: NTSC,
      width: 320,
      height: 240,
      audio: true,
      keyframeSeconds: 20,
    });
    const encoded = await encode("mp4_264_240p", "sparse", sparse);
    expect(encoded.plan.parts.length).toBeGreaterThanOrEqual(6);
    expect(frameOrderProblem(await readFrameNumbers(encoded.path), encoded.plan.totalFrames)).toBeNull();
  });

  it("keyframes 2.5 s apart against parts of 2 s: every part starts on a source keyframe, so no frame before it is decoded for nothing", async () => {
    const offGrid = join(dir, "off-grid.mp4");
    await makeNumberedSource(offGrid, {
      seconds: 12,
      fps: NTSC,
      width: 320,
      height: 240,
      audio: true,
      keyframeSeconds: 2.5,
    });
    const [encoded, sourceKeys] = await Promise.all([
      encode("mp4_264_240p", "off-grid", offGrid),
      keyframesOf(offGrid),
    ]);
    const keys = sourceKeys.map((k) => k.frame);
    expect(keys.slice(0, 3)).toEqual([0, 75, 150]);
    for (const part of encoded.plan.parts) expect(keys, `part ${part.index}`).toContain(part.firstFrame);
    expect(frameOrderProblem(await readFrameNumbers(encoded.path), encoded.plan.totalFrames)).toBeNull();
  });

  it("an edit list that hides its first frames (a stream-copy cut off a keyframe): the split shows the frames and the audio the whole encode shows", async () => {
    // Cut half a second in, by stream copy: the GOP's first 15 frames stay in the file, marked for the player to skip.
    const numbered = join(dir, "before-cut.mp4");
    const cut = join(dir, "edit-list.mp4");
    await makeNumberedSource(numbered, {
      seconds: 12,
      fps: NTSC,
      width: 320,
      height: 240,
      audio: true,
      keyframeSeconds: 2,
    });
    await ffmpeg(["-ss", "0.5", "-i", numbered, "-c", "copy", cut]);
    const encoded = await encode("mp4_264_240p", "edit-list", cut);
    const whole = await unsplit("mp4_264_240p", "edit-list", cut);
    const [shown, wholeShown] = await Promise.all([readFrameNumbers(encoded.path), readFrameNumbers(whole)]);
    expect(wholeShown.slice(0, 2), "the whole encode starts at the cut").toEqual([15, 16]);
    expect(shown).toEqual(wholeShown);
    expect(encoded.plan.totalFrames).toBe(wholeShown.length);
    const [split, reference] = await Promise.all([audioStartVsVideoStart(encoded.path), audioStartVsVideoStart(whole)]);
    expect(Math.abs(split - reference), `split ${split} s, whole ${reference} s`).toBeLessThanOrEqual(0.001);
    expect(await audioDiscontinuities(encoded.path, { toneHz: 440 })).toEqual([]);
  });

  it("audio missing for half a second (a gap in its timestamps): the split plays what follows when the whole encode does, not earlier", async () => {
    // The 12 s source's video, and audio silent but for a 1 kHz beep at 8 s, its packets from 5 to 5.5 s dropped.
    const gapped = join(dir, "audio-gap.mp4");
    await ffmpeg([
      "-i",
      source,
      "-f",
      "lavfi",
      "-i",
      "aevalsrc='if(between(t,8,8.1),0.8*sin(2*PI*1000*t),0)':sample_rate=48000:duration=12",
      "-filter_complex",
      "[1:a]aselect='not(between(t,5,5.5))'[a]",
      "-map",
      "0:v",
      "-map",
      "[a]",
      "-c:v",
      "copy",
      "-c:a",
      "aac",
      gapped,
    ]);
    expect(await firstLoudSampleAt(gapped), "the source keeps its gap").toBeCloseTo(8, 1);
    const [encoded, whole] = await Promise.all([
      encode("mp4_264_240p", "audio-gap", gapped),
      unsplit("mp4_264_240p", "audio-gap", gapped),
    ]);
    const [split, reference] = await Promise.all([firstLoudSampleAt(encoded.path), firstLoudSampleAt(whole)]);
    expect(Math.abs(split - reference), `the beep: split ${split} s, whole ${reference} s`).toBeLessThanOrEqual(0.005);
  });

  it.each<[string, Reading, string, (r: Reordering) => boolean]>([
    // 16 B-frames in a row, no pyramid: a frame is stored up to 17 frames (0.71 s) after the one shown
    // before it, past a piece's half-second tail.
    ["16 B-frames in a row at 24 fps", "pieces", "bframes=16:b-adapt=0:b-pyramid=none", (r) => r.deepest >= 16],
    ["16 B-frames in a row at 24 fps", "ranges", "bframes=16:b-adapt=0:b-pyramid=none", (r) => r.deepest >= 16],
    // A GOP's leading B-frames are shown before its keyframe and refer to the GOP before it.
    ["open GOPs", "pieces", "bframes=3:b-adapt=0:open-gop=1", (r) => r.behindLaterKeyframe],
    ["open GOPs", "ranges", "bframes=3:b-adapt=0:open-gop=1", (r) => r.behindLaterKeyframe],
  ])("%s, read from %s: every frame once, in order", async (name, reading, params, holds) => {
    const numbered = join(dir, "24fps.mp4");
    const reordered = join(dir, `${name.replaceAll(" ", "-")}-${reading}.mp4`);
    await makeNumberedSource(numbered, {
      seconds: 12,
      fps: { num: 24, den: 1 },
      width: 320,
      height: 240,
      audio: true,
      keyframeSeconds: 2,
    });
    const gop = "keyint=48:min-keyint=48:scenecut=0";
    await ffmpeg(["-i", numbered, "-c:a", "copy", "-c:v", "libx264", "-x264-params", `${params}:${gop}`, reordered]);
    const reordering = await reorderingOf(reordered);
    expect(holds(reordering), `the source is stored as meant: ${JSON.stringify(reordering)}`).toBe(true);
    const encoded = await encode("mp4_264_240p", `${name}-${reading}`, reordered, reading);
    expect(encoded.plan.parts.length).toBeGreaterThanOrEqual(3);
    expect(frameOrderProblem(await readFrameNumbers(encoded.path), encoded.plan.totalFrames)).toBeNull();
  });

  it("no audio: the video alone, every frame once", async () => {
    const silent = join(dir, "silent.mp4");
    await makeNumberedSource(silent, { seconds: 6, fps: { num: 25, den: 1 }, width: 320, height: 240, audio: false });
    const encoded = await encode("mp4_264_240p", "silent", silent);
    expect(encoded.plan.audio).toBe(false);
    expect((await probeFile(encoded.path)).audio).toEqual([]);
    expect(frameOrderProblem(await readFrameNumbers(encoded.path), encoded.plan.totalFrames)).toBeNull();
  });

  it("shorter than one part, of a variable frame rate, or turned (a display matrix): no plan, the job runs whole", async () => {
    const tiny = join(dir, "tiny.mp4");
    const vfr = join(dir, "vfr.mkv");
    const turned = join(dir, "turned.mp4");
    // A phone held upside down: the picture stored as shot, the player told to turn it.
    await ffmpeg(["-i", source, "-c", "copy", "-metadata:s:v:0", "rotate=180", turned]);
    expect((await splitLocally(turned, "mp4_264_240p", await mkdtemp(join(dir, "turned-")), SETTINGS)).plan).toBeNull();
    await makeNumberedSource(tiny, { seconds: 3, fps: NTSC, width: 320, height: 240, audio: false });
    // Frames at irregular times: every third frame held twice as long.
    await ffmpeg([
      "-i",
      source,
      "-vf",
      "setpts='N/(30*TB)+floor(N/3)/(30*TB)'",
      "-fps_mode",
      "passthrough",
      "-an",
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      vfr,
    ]);
    expect((await splitLocally(tiny, "mp4_264_240p", await mkdtemp(join(dir, "tiny-")), SETTINGS)).plan).toBeNull();
    expect((await splitLocally(vfr, "mp4_264_240p", await mkdtemp(join(dir, "vfr-")), SETTINGS)).plan).toBeNull();
  });
});
