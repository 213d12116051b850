import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { Parser } from "m3u8-parser";
import { parse as parseMpd } from "mpd-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findDefinition } from "../../../domain/presets/definitions";
import type { LadderRecipe } from "../../../domain/presets/recipes";
import { type FfprobeOutput, ffprobeJson } from "../../support/media";
import { checkHlsMaster as checkZippedHlsMaster, extract, parseM3u8 } from "../../support/outputs";
import {
  asDelivered,
  FRAME,
  LONG_SECONDS,
  SECONDS,
  ffprobe,
  makeSources,
  readText,
  rendered,
  type Sources,
} from "./media";

let sources: Sources;
beforeAll(async () => {
  sources = await makeSources();
});
afterAll(() => sources?.cleanup());

function m3u8(text: string) {
  const parser = new Parser();
  parser.push(text);
  parser.end();
  return parser.manifest;
}

/** Checks a master playlist and every variant it names, for a source of `seconds`; returns the variants' heights and codecs. */
async function checkHlsMaster(outDir: string, master: string, seconds = SECONDS) {
  const manifest = m3u8(await readText(join(outDir, master)));
  const variants = manifest.playlists ?? [];
  expect(variants.length).toBeGreaterThan(0);
  const segmentDurations: number[][] = [];
  for (const variant of variants) {
    const path = join(outDir, variant.uri);
    expect(existsSync(path), variant.uri).toBe(true);
    const media = m3u8(await readText(path));
    expect(media.endList).toBe(true);
    for (const segment of media.segments) {
      expect(existsSync(join(dirname(path), segment.uri)), segment.uri).toBe(true);
      if (segment.map) expect(existsSync(join(dirname(path), segment.map.uri))).toBe(true);
    }
    const total = media.segments.reduce((sum, s) => sum + s.duration, 0);
    expect(Math.abs(total - seconds)).toBeLessThanOrEqual(FRAME + 0.03);
    segmentDurations.push(media.segments.map((s) => Math.round(s.duration * 100) / 100));
  }
  // Aligned keyframes: every rung is cut at the same instants.
  for (const durations of segmentDurations) expect(durations).toEqual(segmentDurations[0]);
  return { manifest, variants };
}

/** Codec, tag and size of a variant's media, read through its playlist like a player would. */
async function variantVideo(playlistPath: string) {
  const { streams } = await ffprobe(playlistPath);
  return streams.find((s) => s.codec_type === "video")!;
}

/** The output of a ladder as one ZIP (contract §3.9), its members written out as a player's disk would hold them. */
async function zipped(presetId: string, input: string) {
  const { outDir, output } = await rendered(sources, presetId, input);
  if (output.kind !== "zip") throw new Error("expected a ZIP");
  const members = await asDelivered(outDir, output.files);
  return { members, dir: await extract(members) };
}

/** FFmpeg reads a playlist or manifest and its segments from disk, as a player would. */
const probeManifest = (path: string) =>
  ffprobeJson(path, ["-protocol_whitelist", "file"]).catch((err) => {
    throw new Error(`${path} does not decode: ${err}`);
  });

/** Every video stream in the ladder's codec (HEVC tagged hvc1), AAC audio beside them; the videos' heights. */
function ladderStreams(id: string, codec: string, probe: FfprobeOutput): number[] {
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

describe.each([
  ["hls_abr_264_basic", [720, 480, 360], "h264", "avc1", "vod", 6, SECONDS],
  ["hls_abr_264_standard", [720, 480, 360], "h264", "avc1", "vod", 6, SECONDS],
  ["hls_abr_265_efficient_4k", [720, 480], "hevc", "hvc1", "vod", 6, SECONDS],
  ["hls_abr_av1_efficient", [720, 480, 360], "av1", "av01", "vod", 6, SECONDS],
  // Two segments per rung: whether the rungs are cut at the same instants shows.
  ["live_hls_264_lowlatency", [720, 480, 360], "h264", "avc1", "event", 2, LONG_SECONDS],
] as const)("%s renders", (presetId, heights, codec, tag, playlistType, segmentSeconds, seconds) => {
  const input = () => (seconds === LONG_SECONDS ? sources.avLong : sources.av);

  it(`HLS master with ${heights.join("/")}p variants (rungs above 720p dropped), ${codec}`, async () => {
    const { outDir, output } = await rendered(sources, presetId, input());
    expect(output.kind).toBe("zip");
    if (output.kind !== "zip") return;
    expect(output.files).toContain("master.m3u8");
    const { variants } = await checkHlsMaster(outDir, "master.m3u8", seconds);
    expect(variants.map((v) => v.attributes.RESOLUTION?.height)).toEqual([...heights]);
    for (const variant of variants) {
      // BANDWIDTH is the peak: never below the variant's maxrate plus its audio.
      const rung = (findDefinition(presetId)!.recipe as LadderRecipe).rungs.find(
        (r) => r.height === variant.attributes.RESOLUTION?.height,
      )!;
      expect(variant.attributes.BANDWIDTH).toBeGreaterThanOrEqual((rung.maxrate + rung.audioBitrate) * 1000);
      const playlistPath = join(outDir, variant.uri);
      const media = m3u8(await readText(playlistPath));
      expect(media.playlistType).toBe(playlistType.toUpperCase());
      expect(media.targetDuration).toBeLessThanOrEqual(segmentSeconds);
      const video = await variantVideo(playlistPath);
      expect(video).toMatchObject({ codec_name: codec, height: variant.attributes.RESOLUTION?.height });
      if (tag !== "avc1") expect(video.codec_tag_string).toBe(tag);
    }
  });

  it(`as one ZIP (contract §3.9): a master playlist whose variants resolve and decode: ${heights.join("/")}p in ${codec}, none above the source`, async () => {
    const { members, dir } = await zipped(presetId, input());
    expect(checkZippedHlsMaster(members, "master.m3u8")).toEqual([...heights]);
    const master = parseM3u8(members.get("master.m3u8")!.toString("utf8"));
    const decoded: number[] = [];
    for (const variant of master.playlists!) {
      const probe = await probeManifest(join(dir, variant.uri));
      decoded.push(...ladderStreams(presetId, codec, probe));
      expect(Math.abs(Number(probe.format.duration) - seconds), variant.uri).toBeLessThanOrEqual(FRAME + 0.05);
    }
    expect(decoded.sort((a, b) => b - a)).toEqual([...heights]);
  });
});

describe.each([
  ["dash_abr_264_standard", [720, 480, 360], "avc1", "h264", false],
  ["live_dash_264_lowlatency", [720, 480, 360], "avc1", "h264", true],
  ["cmaf_abr_265_standard", [720, 480], "hvc1", "hevc", false],
] as const)("%s renders", (presetId, heights, codecPrefix, codec, lowLatency) => {
  it(`DASH MPD with ${heights.join("/")}p video representations and one audio representation`, async () => {
    const { outDir, output } = await rendered(sources, presetId);
    if (output.kind !== "zip") throw new Error("expected a ZIP");
    const manifestPath = join(outDir, "manifest.mpd");
    const text = await readText(manifestPath);
    const mpd = parseMpd(text, { manifestUri: `file://${manifestPath}` });
    expect(mpd.playlists.map((p) => p.attributes.RESOLUTION?.height)).toEqual([...heights]);
    const audioGroups = Object.values(mpd.mediaGroups.AUDIO).flatMap((g) => Object.values(g));
    const audio = audioGroups.flatMap((g) => g.playlists);
    expect(audio).toHaveLength(1);
    for (const rep of [...mpd.playlists, ...audio]) {
      expect(rep.attributes.CODECS.startsWith(rep === audio[0] ? "mp4a" : codecPrefix)).toBe(true);
      expect(rep.attributes.BANDWIDTH).toBeGreaterThan(0);
      expect(rep.segments.length).toBeGreaterThan(0);
      for (const segment of rep.segments) {
        expect(existsSync(new URL(segment.resolvedUri).pathname), segment.uri).toBe(true);
        if (segment.map) expect(existsSync(new URL(segment.map.resolvedUri).pathname)).toBe(true);
      }
      const total = rep.segments.reduce((sum, s) => sum + s.duration, 0);
      expect(Math.abs(total - SECONDS)).toBeLessThanOrEqual(0.1);
    }
    if (lowLatency) {
      // 1 s segments sent as 0.2 s chunks: a player may fetch a segment 0.8 s before it is complete.
      expect(text).toContain('availabilityTimeOffset="0.800"');
      expect(mpd.playlists[0].segments).toHaveLength(SECONDS);
    }
    if (presetId === "cmaf_abr_265_standard") {
      // The same fMP4 segments, also described by an HLS master with an audio group.
      const { manifest } = await checkHlsMaster(outDir, "master.m3u8");
      expect(manifest.playlists?.map((p) => p.attributes.RESOLUTION?.height)).toEqual([...heights]);
      expect(Object.keys(manifest.mediaGroups?.AUDIO ?? {})).toHaveLength(1);
      const hlsSegments = m3u8(await readText(join(outDir, manifest.playlists![0].uri))).segments.map((s) => s.uri);
      expect(hlsSegments).toEqual(mpd.playlists[0].segments.map((s) => s.uri));
    }
  });

  it(`as one ZIP (contract §3.9): a DASH manifest whose representations decode: ${heights.join("/")}p in ${codec}`, async () => {
    const { members, dir } = await zipped(presetId, sources.av);
    expect(members.get("manifest.mpd")?.toString("utf8")).toMatch(/<MPD/);
    // FFmpeg's DASH demuxer reads the manifest and every representation's segments.
    const probe = await probeManifest(join(dir, "manifest.mpd"));
    expect(ladderStreams(presetId, codec, probe).sort((a, b) => b - a)).toEqual([...heights]);
    expect(Math.abs(Number(probe.format.duration) - SECONDS)).toBeLessThanOrEqual(FRAME + 0.05);
    if (presetId === "cmaf_abr_265_standard") {
      // One fMP4 set, two manifests: the HLS master names the same renditions.
      expect(checkZippedHlsMaster(members, "master.m3u8")).toEqual([...heights]);
    }
  });
});

it("a ladder on a source without audio has video-only variants", async () => {
  const { outDir } = await rendered(sources, "hls_abr_264_basic", sources.videoOnly);
  const { variants } = await checkHlsMaster(outDir, "master.m3u8");
  const { streams } = await ffprobe(join(outDir, variants[0].uri));
  expect(streams.map((s) => s.codec_type)).toEqual(["video"]);
});
