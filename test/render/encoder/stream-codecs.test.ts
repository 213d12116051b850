import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Parser } from "m3u8-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { streamRecipe } from "../../../domain/stream/layout";
import { wholeStreamCommand } from "../../../encoder/ffmpeg/args/stream";
import { probeSource } from "../../../encoder/ffmpeg/probe";
import { runFfmpeg } from "../../../encoder/ffmpeg/run";
import { codecsOfInit, codecsOfTs, timescaleOfInit } from "../../../encoder/stream/codecs";
import { makeSource } from "../../support/media";

/**
 * The codecs strings the master playlist and the MPD carry (docs/playback.md#how-a-stream-is-made),
 * read off the segments the encoder's own stream commands make, against what FFmpeg's HLS muxer
 * writes in a master playlist of its own (`-master_pl_name`) and what ffprobe reads of the streams.
 */
const run = promisify(execFile);

/** Each preset's kind of segment and video encoder: x264 in MPEG-TS and in fMP4, x265 tagged hvc1, SVT-AV1. */
const PRESETS = ["hls_abr_264_basic", "dash_abr_264_standard", "cmaf_abr_265_standard", "hls_abr_av1_efficient"];
/** A 360p source keeps one rung of each of these ladders. */
const RUNG = "360p";

let dir: string;
/** Each preset's output folder, and the CODECS FFmpeg's own master playlist gives each of its variants. */
const made = new Map<string, { outDir: string; ffmpegCodecs: Map<string, string | undefined> }>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stream-codecs-"));
  const source = join(dir, "source.mp4");
  await makeSource(source, { seconds: 3, width: 640, height: 360 });
  const { probe } = await probeSource(source);
  for (const presetId of PRESETS) {
    const recipe = streamRecipe(presetId);
    if (!recipe) throw new Error(`${presetId} is not a stream`);
    const outDir = join(dir, presetId);
    await mkdir(outDir);
    const { args } = wholeStreamCommand({ presetId, input: source, outDir, probe }, recipe, 0);
    // FFmpeg's master playlist beside the renditions, for the CODECS it writes: the output path stays last.
    args.splice(args.length - 1, 0, "-master_pl_name", "master.m3u8");
    await runFfmpeg(args, { durationSeconds: probe.duration });
    const parser = new Parser();
    parser.push(await readFile(join(outDir, "master.m3u8"), "utf8"));
    parser.end();
    const ffmpegCodecs = new Map(
      (parser.manifest.playlists ?? []).map((p) => [p.uri.split("/")[0], p.attributes.CODECS]),
    );
    made.set(presetId, { outDir, ffmpegCodecs });
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function output(presetId: string) {
  const found = made.get(presetId);
  if (!found) throw new Error(`${presetId} was not made`);
  return found;
}

/** A rendition's init segment as FFmpeg names it (after its stream: init_0.mp4, init_1.mp4). */
async function initOf(presetId: string, rendition: string): Promise<{ path: string; bytes: Buffer }> {
  const folder = join(output(presetId).outDir, rendition);
  const name = (await readdir(folder)).find((f) => /^init(_\d+)?\.mp4$/.test(f));
  if (!name) throw new Error(`${presetId}/${rendition} has no init segment`);
  const path = join(folder, name);
  return { path, bytes: await readFile(path) };
}

interface ProbedStream {
  codec_name: string;
  codec_tag_string: string;
  profile?: string;
  level?: number;
  pix_fmt?: string;
  time_base: string;
}

/** What ffprobe reads of a file's one stream. */
async function probeStream(path: string): Promise<ProbedStream> {
  const { stdout } = await run("ffprobe", [
    "-v",
    "error",
    "-show_entries",
    "stream=codec_name,codec_tag_string,profile,level,pix_fmt,time_base",
    "-of",
    "json",
    path,
  ]);
  const [stream] = (JSON.parse(stdout) as { streams: ProbedStream[] }).streams;
  return stream;
}

/** An fMP4 rendition's init segment and first segment as one file, which ffprobe reads whole. */
async function playable(presetId: string, rendition: string): Promise<string> {
  const init = await initOf(presetId, rendition);
  const first = await readFile(join(output(presetId).outDir, rendition, "seg_00000.m4s"));
  const path = join(dir, `${presetId}-${rendition}.mp4`);
  await writeFile(path, Buffer.concat([init.bytes, first]));
  return path;
}

const hex2 = (n: number) => n.toString(16).padStart(2, "0");
/** H.264's profile_idc by the name ffprobe gives it. */
const H264_PROFILES: Record<string, number> = { Baseline: 66, "Constrained Baseline": 66, Main: 77, High: 100 };

describe("codecsOfInit on the init segments FFmpeg's HLS muxer writes", () => {
  it("x264: what FFmpeg's master playlist says, with the profile and level ffprobe reads", async () => {
    const ours = codecsOfInit((await initOf("dash_abr_264_standard", RUNG)).bytes);
    expect(ours).toBe(output("dash_abr_264_standard").ffmpegCodecs.get(RUNG));
    const probed = await probeStream(await playable("dash_abr_264_standard", RUNG));
    expect(probed.codec_tag_string).toBe("avc1");
    expect(ours).toMatch(
      new RegExp(`^avc1\\.${hex2(H264_PROFILES[probed.profile ?? ""] ?? -1)}[0-9a-f]{2}${hex2(probed.level ?? -1)}$`),
    );
  });

  it("x265 tagged hvc1: FFmpeg's profile and level, the compatibility and constraint fields read off hvcC", async () => {
    const ours = codecsOfInit((await initOf("cmaf_abr_265_standard", RUNG)).bytes);
    const probed = await probeStream(await playable("cmaf_abr_265_standard", RUNG));
    expect(probed).toMatchObject({ codec_name: "hevc", codec_tag_string: "hvc1", profile: "Main" });
    // Main (profile 1), compatible with Main and Main 10 (flags 1 and 2, bit-reversed: 6), main tier at
    // ffprobe's level, a progressive frame-only picture (constraint byte 0x90).
    expect(ours).toBe(`hvc1.1.6.L${probed.level}.90`);
    // FFmpeg writes its compatibility and constraint fields as the constants 4 and B01; its profile and level agree.
    const ffmpeg = output("cmaf_abr_265_standard").ffmpegCodecs.get(RUNG)?.split(".");
    const fields = ours?.split(".");
    expect([fields?.[0], fields?.[1], fields?.[3]]).toEqual([ffmpeg?.[0], ffmpeg?.[1], ffmpeg?.[3]]);
  });

  it("SVT-AV1: profile, level, tier and depth as ffprobe reads them (FFmpeg's own CODECS, where it writes one)", async () => {
    const ours = codecsOfInit((await initOf("hls_abr_av1_efficient", RUNG)).bytes);
    const probed = await probeStream(await playable("hls_abr_av1_efficient", RUNG));
    expect(probed).toMatchObject({ codec_name: "av1", codec_tag_string: "av01", profile: "Main", pix_fmt: "yuv420p" });
    expect(ours).toBe(`av01.0.${String(probed.level).padStart(2, "0")}M.08`);
    const ffmpeg = output("hls_abr_av1_efficient").ffmpegCodecs.get(RUNG);
    if (ffmpeg !== undefined) expect(ours).toBe(ffmpeg);
  });

  it("AAC: what FFmpeg's master playlist says of the audio rendition, for each fMP4 preset", async () => {
    for (const presetId of PRESETS.slice(1)) {
      const ours = codecsOfInit((await initOf(presetId, "audio")).bytes);
      expect(ours, presetId).toBe("mp4a.40.2");
      expect(ours, presetId).toBe(output(presetId).ffmpegCodecs.get("audio"));
      expect((await probeStream(await playable(presetId, "audio"))).profile, presetId).toBe("LC");
    }
  });

  it("a media segment, or a file of no box, holds no codecs", async () => {
    const { outDir } = output("dash_abr_264_standard");
    expect(codecsOfInit(await readFile(join(outDir, RUNG, "seg_00000.m4s")))).toBeUndefined();
    expect(codecsOfInit(new Uint8Array(0))).toBeUndefined();
  });
});

describe("codecsOfTs on an MPEG-TS segment FFmpeg's HLS muxer writes", () => {
  it("H.264 from the first SPS, AAC from the first ADTS header: what FFmpeg's master playlist says", async () => {
    const { outDir, ffmpegCodecs } = output("hls_abr_264_basic");
    const video = await readFile(join(outDir, RUNG, "seg_00000.ts"));
    const audio = await readFile(join(outDir, "audio", "seg_00000.ts"));
    expect(codecsOfTs(video, "video")).toBe(ffmpegCodecs.get(RUNG));
    expect(codecsOfTs(audio, "audio")).toBe(ffmpegCodecs.get("audio"));
    expect(codecsOfTs(audio, "audio")).toBe("mp4a.40.2");
    const probed = await probeStream(join(outDir, RUNG, "seg_00000.ts"));
    expect(codecsOfTs(video, "video")).toMatch(
      new RegExp(`^avc1\\.${hex2(H264_PROFILES[probed.profile ?? ""] ?? -1)}[0-9a-f]{2}${hex2(probed.level ?? -1)}$`),
    );
  });
});

describe("timescaleOfInit", () => {
  it("each track's timescale, as ffprobe reads its time base", async () => {
    for (const presetId of PRESETS.slice(1)) {
      for (const rendition of [RUNG, "audio"]) {
        const { path, bytes } = await initOf(presetId, rendition);
        const probed = await probeStream(path);
        expect(`1/${timescaleOfInit(bytes)}`, `${presetId}/${rendition}`).toBe(probed.time_base);
      }
    }
    expect(timescaleOfInit((await initOf("dash_abr_264_standard", "audio")).bytes)).toBe(48_000);
  });
});
