import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRESETS, type CatalogueEntry } from "../../domain/presets/catalogue";
import { ffmpeg, type FfprobeOutput, ffprobeJson } from "../support/media";
import { checkHlsMaster, extract, loudnessLufs, parseM3u8, readZip } from "../support/outputs";
import { expectStatus } from "../support/api-client";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { startE2E, type Client, type E2E } from "./harness";
import type { Job } from "../../client";

const SECONDS = 1;
const FPS = 30;
const FRAME = 1 / FPS;
let e2e: E2E;
let fixtures: FixtureServer;
let client: Client;
let sourceUrl: string;
const jobs = new Map<string, Promise<Job>>();

/** 1280x720 test pattern, a tone, and two text subtitle tracks (SRT, in Matroska). */
async function makeSubtitledSource(dir: string) {
  const srt = (text: string) =>
    `1\n00:00:00,150 --> 00:00:00,450\n${text} & more\n\n2\n00:00:00,550 --> 00:00:00,850\nSecond cue\n`;
  await writeFile(join(dir, "en.srt"), srt("Hello"));
  await writeFile(join(dir, "fr.srt"), srt("Bonjour"));
  await ffmpeg([
    "-f",
    "lavfi",
    "-i",
    `testsrc2=size=1280x720:rate=${FPS}:duration=${SECONDS}`,
    "-f",
    "lavfi",
    "-i",
    `sine=frequency=440:sample_rate=48000:duration=${SECONDS}`,
    "-i",
    join(dir, "en.srt"),
    "-i",
    join(dir, "fr.srt"),
    "-map",
    "0:v",
    "-map",
    "1:a",
    "-map",
    "2:s",
    "-map",
    "3:s",
    "-metadata:s:s:0",
    "language=eng",
    "-metadata:s:s:1",
    "language=fra",
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-pix_fmt",
    "yuv420p",
    "-g",
    String(FPS),
    "-c:a",
    "aac",
    "-ac",
    "2",
    "-c:s",
    "srt",
    join(dir, "source.mkv"),
  ]);
}

beforeAll(async () => {
  [e2e, fixtures] = await Promise.all([startE2E({ allowLoopbackSources: true }), startFixtureServer()]);
  await makeSubtitledSource(fixtures.dir);
  sourceUrl = fixtures.url("source.mkv");
  client = await e2e.client("enterprise");
  // All 23 submitted at once; the service encodes two at a time.
  for (const preset of PRESETS) {
    const created = await client.createJob({ inputUrl: sourceUrl, preset: preset.id });
    expectStatus(created, 201);
    jobs.set(preset.id, e2e.waitFor(client, created.body.id, undefined, 600_000));
  }
});
afterAll(async () => {
  await e2e?.stop();
  await fixtures?.stop();
});

async function download(preset: CatalogueEntry) {
  const job = await jobs.get(preset.id)!;
  expect(job.status, `${preset.id}: ${job.errorMessage}`).toBe("completed");
  expect(job.duration).toBeCloseTo(SECONDS, 1);
  const res = await fetch(job.outputUrl!);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

async function saved(data: Buffer, name: string) {
  const path = join(await mkdtemp(join(tmpdir(), "out-")), name);
  await writeFile(path, data);
  return path;
}

const CODEC_NAMES: Record<string, string> = {
  libx264: "h264",
  libx265: "hevc",
  "libvpx-vp9": "vp9",
  libsvtav1: "av1",
  copy: "h264",
  aac: "aac",
  libopus: "opus",
  libmp3lame: "mp3",
};
/** The sample entry each video codec gets in its container (hvc1, not hev1, for Apple's players; WebM has none). */
const CODEC_TAGS: Record<string, string> = { h264: "avc1", hevc: "hvc1", vp9: "[0][0][0][0]" };

/**
 * The single-file video presets (H.264, H.265, VP9) are encoded here only. The render project
 * encodes the ladders, the utilities and the audio presets again, to look deeper (manifests, cut
 * points, loudness).
 */
describe("contract §3.9 Output form by preset › every preset produces real output (end to end)", () => {
  for (const preset of PRESETS.filter((p) => p.output === "file")) {
    it(`${preset.id}: one ${preset.extension} file with the promised streams`, async () => {
      const path = await saved(await download(preset), `out.${preset.extension}`);
      const probe = await ffprobeJson(path);
      const video = probe.streams.find((s) => s.codec_type === "video");
      const audio = probe.streams.find((s) => s.codec_type === "audio");
      const settings = preset.specifications;
      if (settings.videoCodec) {
        expect(video?.codec_name).toBe(CODEC_NAMES[settings.videoCodec]);
        expect(video?.codec_tag_string).toBe(CODEC_TAGS[CODEC_NAMES[settings.videoCodec]]);
        expect(Math.abs(Number(probe.format.duration) - SECONDS)).toBeLessThanOrEqual(FRAME + 0.05);
      } else {
        expect(video).toBeUndefined();
        expect(Math.abs(Number(probe.format.duration) - SECONDS)).toBeLessThanOrEqual(0.1);
      }
      expect(audio).toMatchObject({ codec_name: CODEC_NAMES[settings.audioCodec!], channels: 2 });
      if (audio?.codec_name !== "mp3") expect(audio?.sample_rate).toBe("48000");
      if (settings.resolution) {
        const [width, height] = settings.resolution.split("x").map(Number);
        expect(video).toMatchObject({ width, height });
      }
      if (preset.extension === "mp4" || preset.extension === "m4a") {
        // +faststart: the moov atom comes before mdat.
        const head = (await import("node:fs/promises")).readFile(path).then((b) => b.toString("latin1"));
        const text = await head;
        expect(text.indexOf("moov")).toBeLessThan(text.indexOf("mdat"));
      }
      if (preset.id === "audio_aac_podcast") expect(Math.abs((await loudnessLufs(path)) - -16)).toBeLessThanOrEqual(1);
      if (preset.id === "filter_loudnorm_ebu_r128")
        expect(Math.abs((await loudnessLufs(path)) - -23)).toBeLessThanOrEqual(1);
    });
  }
});

describe("contract §3.9 Output form by preset › multi-file presets come as one ZIP", () => {
  const zipOf = async (id: string) => readZip(await download(PRESETS.find((p) => p.id === id)!));

  /** What each ladder must hold for the 1280x720 source: the rungs at or below 720p, in its codec. */
  const LADDERS: Record<string, { codec: string; heights: number[]; manifest: "hls" | "dash" }> = {
    hls_abr_264_basic: { codec: "h264", heights: [720, 480, 360], manifest: "hls" },
    hls_abr_264_standard: { codec: "h264", heights: [720, 480, 360], manifest: "hls" },
    hls_abr_265_efficient_4k: { codec: "hevc", heights: [720, 480], manifest: "hls" },
    hls_abr_av1_efficient: { codec: "av1", heights: [720, 480, 360], manifest: "hls" },
    live_hls_264_lowlatency: { codec: "h264", heights: [720, 480, 360], manifest: "hls" },
    dash_abr_264_standard: { codec: "h264", heights: [720, 480, 360], manifest: "dash" },
    live_dash_264_lowlatency: { codec: "h264", heights: [720, 480, 360], manifest: "dash" },
    cmaf_abr_265_standard: { codec: "hevc", heights: [720, 480], manifest: "dash" },
  };

  /** FFmpeg reads a playlist or manifest and its segments from disk, as a player would. */
  const probeManifest = (path: string) =>
    ffprobeJson(path, ["-protocol_whitelist", "file"]).catch((err) => {
      throw new Error(`${path} does not decode: ${err}`);
    });

  function expectLadderStreams(id: string, probe: FfprobeOutput) {
    const { codec } = LADDERS[id];
    const videos = probe.streams.filter((s) => s.codec_type === "video");
    for (const v of videos) {
      expect(v.codec_name, id).toBe(codec);
      if (codec === "hevc") expect(v.codec_tag_string, id).toBe("hvc1");
    }
    expect(
      probe.streams.some((s) => s.codec_type === "audio" && s.codec_name === "aac"),
      id,
    ).toBe(true);
    return videos.map((v) => v.height as number);
  }

  for (const id of Object.keys(LADDERS).filter((id) => LADDERS[id].manifest === "hls")) {
    it(`${id}: a master playlist whose variants resolve and decode: ${LADDERS[id].heights.join("/")}p in ${LADDERS[id].codec}, none above the source`, async () => {
      const members = await zipOf(id);
      expect(checkHlsMaster(members, "master.m3u8")).toEqual(LADDERS[id].heights);
      const dir = await extract(members);
      const master = parseM3u8(members.get("master.m3u8")!.toString("utf8"));
      const decoded: number[] = [];
      for (const variant of master.playlists!) {
        const probe = await probeManifest(join(dir, variant.uri));
        decoded.push(...expectLadderStreams(id, probe));
        expect(Math.abs(Number(probe.format.duration) - SECONDS), variant.uri).toBeLessThanOrEqual(FRAME + 0.05);
      }
      expect(decoded.sort((a, b) => b - a)).toEqual(LADDERS[id].heights);
    });
  }

  for (const id of Object.keys(LADDERS).filter((id) => LADDERS[id].manifest === "dash")) {
    it(`${id}: a DASH manifest whose representations decode: ${LADDERS[id].heights.join("/")}p in ${LADDERS[id].codec}`, async () => {
      const members = await zipOf(id);
      expect(members.get("manifest.mpd")?.toString("utf8")).toMatch(/<MPD/);
      const dir = await extract(members);
      // FFmpeg's DASH demuxer reads the manifest and every representation's segments.
      const probe = await probeManifest(join(dir, "manifest.mpd"));
      expect(expectLadderStreams(id, probe).sort((a: number, b: number) => b - a)).toEqual(LADDERS[id].heights);
      expect(Math.abs(Number(probe.format.duration) - SECONDS)).toBeLessThanOrEqual(FRAME + 0.05);
      if (id === "cmaf_abr_265_standard") {
        // One fMP4 set, two manifests: the HLS master names the same renditions.
        expect(checkHlsMaster(members, "master.m3u8")).toEqual(LADDERS[id].heights);
      }
    });
  }

  it("util_thumbnails: five JPEGs (the minimum) for the 1 s source, at most 640 px wide, keeping its aspect", async () => {
    const members = await zipOf("util_thumbnails");
    const thumbs = [...members.keys()].filter((n) => n.endsWith(".jpg"));
    expect(thumbs).toHaveLength(5);
    for (const name of thumbs) {
      const probe = await ffprobeJson(await saved(members.get(name)!, "t.jpg"));
      expect(probe.streams[0]).toMatchObject({ codec_name: "mjpeg", width: 640, height: 360 });
    }
  });

  it("util_sprite_vtt: every WebVTT cue points inside the sprite sheet", async () => {
    const members = await zipOf("util_sprite_vtt");
    const sheet = await ffprobeJson(await saved(members.get("sprite.jpg")!, "sprite.jpg"));
    const { width, height } = sheet.streams[0] as { width: number; height: number };
    const vtt = members.get("sprite.vtt")!.toString("utf8");
    expect(vtt.startsWith("WEBVTT")).toBe(true);
    const cues = [...vtt.matchAll(/sprite\.jpg#xywh=(\d+),(\d+),(\d+),(\d+)/g)].map((m) => m.slice(1).map(Number));
    expect(cues.length).toBeGreaterThan(0);
    for (const [x, y, w, h] of cues) {
      expect(x + w).toBeLessThanOrEqual(width);
      expect(y + h).toBeLessThanOrEqual(height);
    }
  });

  it("util_subs_sidecar_basic: the MP4 and one WebVTT per text subtitle track, & escaped", async () => {
    const members = await zipOf("util_subs_sidecar_basic");
    const vtts = [...members.keys()].filter((n) => n.endsWith(".vtt")).sort();
    expect(vtts).toHaveLength(2);
    expect(vtts.join(" ")).toMatch(/eng/);
    expect(vtts.join(" ")).toMatch(/fra/);
    for (const name of vtts) {
      const text = members.get(name)!.toString("utf8");
      expect(text.startsWith("WEBVTT")).toBe(true);
      expect(text).toContain("&amp; more");
      expect(text).not.toMatch(/& more/);
    }
    const mp4 = [...members.keys()].filter((n) => n.endsWith(".mp4"));
    expect(mp4).toHaveLength(1);
    const probe = await ffprobeJson(await saved(members.get(mp4[0])!, "video.mp4"));
    expect(probe.streams.map((s) => s.codec_name).sort()).toEqual(["aac", "h264"]);
    expect(Math.abs(Number(probe.format.duration) - SECONDS)).toBeLessThanOrEqual(FRAME + 0.05);
  });
});
