import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Parser } from "m3u8-parser";
import { parse as parseMpd } from "mpd-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findDefinition } from "../../../domain/presets/definitions";
import type { LadderRecipe } from "../../../domain/presets/recipes";
import { MEDIA_OFFSET_SECONDS } from "../../../domain/stream/layout";
import { timescaleOfInit } from "../../../encoder/stream/codecs";
import { firstSampleTimes } from "../../../encoder/stream/fmp4-time";
import { segmentsOffKeyframes } from "../../support/keyframes";
import { type FfprobeOutput, ffprobeJson } from "../../support/media";
import { checkHlsMaster as checkZippedHlsMaster, extract } from "../../support/outputs";
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

/**
 * The streaming presets' output (docs/playback.md#how-a-stream-is-made, docs/presets.md): one
 * folder per rendition (each rung, and one audio rendition they share), the playlists and MPD
 * the Worker serves once a job is done, all in the ZIP (contract §3.9).
 */
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

const recipeOf = (presetId: string) => findDefinition(presetId)?.recipe as LadderRecipe;

/** Checks every media playlist a master names, for a source of `seconds`; returns their segments' lengths. */
async function checkMediaPlaylists(outDir: string, uris: string[], seconds: number) {
  const lengths: number[][] = [];
  for (const uri of uris) {
    const path = join(outDir, uri);
    expect(existsSync(path), uri).toBe(true);
    const media = m3u8(await readText(path));
    expect(media).toMatchObject({ playlistType: "VOD", endList: true, mediaSequence: 0 });
    for (const segment of media.segments) {
      expect(existsSync(join(dirname(path), segment.uri)), segment.uri).toBe(true);
      if (segment.map) expect(existsSync(join(dirname(path), segment.map.uri))).toBe(true);
    }
    const total = media.segments.reduce((sum, s) => sum + s.duration, 0);
    expect(Math.abs(total - seconds), uri).toBeLessThanOrEqual(FRAME + 0.03);
    lengths.push(media.segments.map((s) => Math.round(s.duration * 100) / 100));
  }
  return lengths;
}

/** A fMP4 rendition's segments one after another on the stream's clock: each starts where the last ended. */
async function checkDecodeTimes(folder: string, segments: { uri: string; duration: number }[], firstAt: number) {
  const timescale = timescaleOfInit(await readFile(join(folder, "init.mp4")));
  if (!timescale) throw new Error(`${folder}/init.mp4 has no timescale`);
  let expected = firstAt;
  for (const segment of segments) {
    const first = firstSampleTimes(await readFile(join(folder, segment.uri)));
    if (!first) throw new Error(`${segment.uri} has no decode time`);
    expect((first.decode + first.composition) / timescale, `${folder}/${segment.uri}`).toBeCloseTo(expected, 1);
    expected += segment.duration;
  }
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
  ["hls_abr_264_basic", [720, 480, 360], "h264", "avc1", SECONDS],
  ["hls_abr_264_standard", [720, 480, 360], "h264", "avc1", SECONDS],
  ["hls_abr_265_efficient_4k", [720, 480], "hevc", "hvc1", SECONDS],
  ["hls_abr_av1_efficient", [720, 480, 360], "av1", "av01", SECONDS],
  // Two segments per rendition: whether the rungs are cut at the same instants shows.
  ["live_hls_264_lowlatency", [720, 480, 360], "h264", "avc1", LONG_SECONDS],
] as const)("%s renders", (presetId, heights, codec, tag, seconds) => {
  const input = () => (seconds === LONG_SECONDS ? sources.avLong : sources.av);

  it(`an HLS master with ${heights.join("/")}p variants (rungs above 720p dropped) and one audio rendition they share`, async () => {
    const { outDir, output } = await rendered(sources, presetId, input());
    if (output.kind !== "zip") throw new Error("expected a ZIP");
    expect(output.files).toContain("master.m3u8");
    const master = m3u8(await readText(join(outDir, "master.m3u8")));
    const variants = master.playlists ?? [];
    expect(variants.map((v) => v.attributes.RESOLUTION?.height)).toEqual([...heights]);
    const audio = master.mediaGroups?.AUDIO?.audio?.audio;
    expect(audio).toMatchObject({ uri: "audio/index.m3u8", default: true });
    const recipe = recipeOf(presetId);
    for (const variant of variants) {
      // BANDWIDTH is the peak: the rung's maxrate plus the audio it plays with.
      const rung = recipe.rungs.find((r) => r.height === variant.attributes.RESOLUTION?.height)!;
      expect(variant.attributes.BANDWIDTH).toBeGreaterThanOrEqual((rung.maxrate + rung.audioBitrate) * 1000);
      expect(variant.attributes.CODECS).toMatch(new RegExp(`^${tag}\\.[0-9A-Za-z.]+,mp4a\\.40\\.2$`));
      expect(variant.attributes.AUDIO).toBe("audio");
      const { streams } = await ffprobe(join(outDir, variant.uri));
      const video = streams.find((s) => s.codec_type === "video")!;
      expect(video).toMatchObject({ codec_name: codec, height: variant.attributes.RESOLUTION?.height });
      if (tag !== "avc1") expect(video.codec_tag_string).toBe(tag);
    }
    const lengths = await checkMediaPlaylists(outDir, [...variants.map((v) => v.uri), "audio/index.m3u8"], seconds);
    // Aligned keyframes: every rung is cut at the same instants.
    for (const rung of lengths.slice(0, variants.length)) expect(rung).toEqual(lengths[0]);
    const { streams } = await ffprobe(join(outDir, "audio/index.m3u8"));
    expect(streams.map((s) => [s.codec_type, s.codec_name])).toEqual([["audio", "aac"]]);
    expect(await segmentsOffKeyframes(join(outDir, "master.m3u8"))).toEqual([]);
  });

  it(`as one ZIP (contract §3.9): a master playlist whose renditions resolve and decode: ${heights.join("/")}p in ${codec} with AAC`, async () => {
    const { members, dir } = await zipped(presetId, input());
    expect(checkZippedHlsMaster(members, "master.m3u8")).toEqual([...heights]);
    const probe = await probeManifest(join(dir, "master.m3u8"));
    expect(ladderStreams(presetId, codec, probe).sort((a, b) => b - a)).toEqual([...heights]);
    expect(Math.abs(Number(probe.format.duration) - seconds)).toBeLessThanOrEqual(FRAME + 0.05);
  });
});

/** A rendition's segments, in order, as its HLS playlist or the MPD names them. */
async function renditionSegments(outDir: string, rendition: string) {
  const playlist = join(outDir, rendition, "index.m3u8");
  if (existsSync(playlist)) return m3u8(await readText(playlist)).segments;
  const manifest = join(outDir, "manifest.mpd");
  const mpd = parseMpd(await readText(manifest), { manifestUri: `file://${manifest}` });
  const audio = Object.values(mpd.mediaGroups.AUDIO).flatMap((g) => Object.values(g).flatMap((r) => r.playlists));
  const representation = [...mpd.playlists, ...audio].find((p) => p.attributes.NAME === rendition);
  if (!representation) throw new Error(`no ${rendition} in ${manifest}`);
  return representation.segments.map((s) => ({ uri: s.uri.slice(s.uri.lastIndexOf("/") + 1), duration: s.duration }));
}

describe.each(["hls_abr_265_efficient_4k", "live_hls_264_lowlatency", "dash_abr_264_standard"])(
  "%s: fMP4 segments on the stream's clock",
  (presetId) => {
    it("the first frame at the stream's offset, the audio where it starts less the encoder's priming, each segment where the last ended", async () => {
      const { outDir } = await rendered(sources, presetId, sources.avLong);
      for (const rendition of ["480p", "audio"]) {
        const segments = await renditionSegments(outDir, rendition);
        expect(segments.length, rendition).toBeGreaterThan(0);
        const firstAt = rendition === "audio" ? MEDIA_OFFSET_SECONDS - 1024 / 48_000 : MEDIA_OFFSET_SECONDS;
        await checkDecodeTimes(join(outDir, rendition), segments, firstAt);
      }
    });
  },
);

describe.each([
  ["dash_abr_264_standard", [720, 480, 360], "avc1", "h264", 4],
  ["live_dash_264_lowlatency", [720, 480, 360], "avc1", "h264", 1],
  ["cmaf_abr_265_standard", [720, 480], "hvc1", "hevc", 4],
] as const)("%s renders", (presetId, heights, codecPrefix, codec, segmentSeconds) => {
  it(`a static DASH MPD with ${heights.join("/")}p video representations and one audio representation, ${segmentSeconds} s segments`, async () => {
    const { outDir, output } = await rendered(sources, presetId, sources.avLong);
    if (output.kind !== "zip") throw new Error("expected a ZIP");
    const manifestPath = join(outDir, "manifest.mpd");
    const text = await readText(manifestPath);
    expect(text).toMatch(/type="static"/);
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
      expect(Math.abs(total - LONG_SECONDS)).toBeLessThanOrEqual(0.1);
    }
    expect(mpd.playlists[0].segments).toHaveLength(Math.ceil(LONG_SECONDS / segmentSeconds));
    if (presetId === "cmaf_abr_265_standard") {
      // The same fMP4 segments, also named by an HLS master with an audio group.
      const master = m3u8(await readText(join(outDir, "master.m3u8")));
      expect(master.playlists?.map((p) => p.attributes.RESOLUTION?.height)).toEqual([...heights]);
      expect(Object.keys(master.mediaGroups?.AUDIO ?? {})).toHaveLength(1);
      const variant = master.playlists![0].uri;
      const hlsSegments = m3u8(await readText(join(outDir, variant))).segments.map((s) =>
        join(dirname(join(outDir, variant)), s.uri),
      );
      expect(hlsSegments).toEqual(mpd.playlists[0].segments.map((s) => new URL(s.resolvedUri).pathname));
    }
  });

  it(`as one ZIP (contract §3.9): a DASH manifest whose representations decode: ${heights.join("/")}p in ${codec}`, async () => {
    const { members, dir } = await zipped(presetId, sources.avLong);
    expect(members.get("manifest.mpd")?.toString("utf8")).toMatch(/<MPD/);
    // FFmpeg's DASH demuxer reads the manifest and every representation's segments.
    const probe = await probeManifest(join(dir, "manifest.mpd"));
    expect(ladderStreams(presetId, codec, probe).sort((a, b) => b - a)).toEqual([...heights]);
    expect(Math.abs(Number(probe.format.duration) - LONG_SECONDS)).toBeLessThanOrEqual(FRAME + 0.05);
    if (presetId === "cmaf_abr_265_standard") {
      // One fMP4 set, two manifests: the HLS master names the same renditions.
      expect(checkZippedHlsMaster(members, "master.m3u8")).toEqual([...heights]);
    }
  });
});

it("a ladder on a source without audio has video-only variants and no audio rendition", async () => {
  const { outDir } = await rendered(sources, "hls_abr_264_basic", sources.videoOnly);
  const master = m3u8(await readText(join(outDir, "master.m3u8")));
  expect(master.mediaGroups?.AUDIO ?? {}).toEqual({});
  expect(master.playlists?.[0].attributes.CODECS).toMatch(/^avc1\.[0-9a-f]{6}$/);
  const { streams } = await ffprobe(join(outDir, master.playlists![0].uri));
  expect(streams.map((s) => s.codec_type)).toEqual(["video"]);
  expect(existsSync(join(outDir, "audio"))).toBe(false);
});
