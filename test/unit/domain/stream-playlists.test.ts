import fc from "fast-check";
import { Parser } from "m3u8-parser";
import { parse as parseMpd, parseUTCTiming, stringToMpdXml } from "mpd-parser";
import { describe, expect, it } from "vitest";
import { PRESET_DEFINITIONS, type PresetDefinition } from "../../../domain/presets/definitions";
import type { LadderRecipe } from "../../../domain/presets/recipes";
import { mpd, type RenditionSegments } from "../../../domain/stream/dash";
import { masterPlaylist, mediaPlaylist } from "../../../domain/stream/hls";
import {
  parseMember,
  type StreamLayout,
  type StreamMember,
  segmentName,
  streamLayout,
  streamRecipe,
} from "../../../domain/stream/layout";
import { segmentBoundaries } from "../../../domain/stream/plan";

const SOURCE_1080 = { width: 1920, height: 1080, frameRate: "30000/1001", hasAudio: true };
const SOURCE_360 = { width: 640, height: 360, frameRate: "25/1", hasAudio: true };
const STARTED = new Date("2026-01-02T03:04:05.000Z");
const NOW = new Date("2026-01-02T03:04:20.000Z");

function layoutOf(presetId: string, source = SOURCE_1080): StreamLayout {
  const recipe = streamRecipe(presetId);
  if (!recipe) throw new Error(`${presetId} is not a stream`);
  return streamLayout(recipe, source);
}

const LADDERS = Object.entries<PresetDefinition>(PRESET_DEFINITIONS).flatMap(
  ([id, { recipe }]): [string, LadderRecipe][] => (recipe.kind === "ladder" ? [[id, recipe]] : []),
);

function parsedHls(text: string) {
  const parser = new Parser();
  parser.push(text);
  parser.end();
  return parser.manifest;
}

/** Each rendition's codecs, as its first segment would give them. */
const codecsOf = (layout: StreamLayout) =>
  new Map(
    layout.renditions.map((r) => [
      r.name,
      r.kind === "audio" ? "mp4a.40.2" : `avc1.6400${r.height === 1080 ? "28" : "1f"}`,
    ]),
  );

describe("masterPlaylist (docs/playback.md#how-a-stream-is-made)", () => {
  it("a variant per rung with the audio's bandwidth counted in, the audio one rendition of the audio group", () => {
    const layout = layoutOf("hls_abr_264_standard");
    const audio = layout.renditions.find((r) => r.kind === "audio");
    if (!audio) throw new Error("the layout should have audio");
    const videos = layout.renditions.filter((r) => r.kind === "video");
    const parsed = parsedHls(masterPlaylist(layout, codecsOf(layout)));
    expect(parsed.version).toBe(6);
    expect(parsed.independentSegments).toBe(true);
    expect(parsed.mediaGroups?.AUDIO).toEqual({
      audio: { audio: { uri: "audio/index.m3u8", default: true, autoselect: true } },
    });
    expect(parsed.playlists?.map((p) => p.uri)).toEqual(videos.map((v) => `${v.name}/index.m3u8`));
    expect(parsed.playlists?.map((p) => p.attributes)).toEqual(
      videos.map((v) => ({
        BANDWIDTH: v.bandwidth + audio.bandwidth,
        // m3u8-parser reads AVERAGE-BANDWIDTH as text.
        "AVERAGE-BANDWIDTH": String(v.averageBandwidth + audio.averageBandwidth),
        CODECS: `${codecsOf(layout).get(v.name)},mp4a.40.2`,
        RESOLUTION: { width: v.width, height: v.height },
        "FRAME-RATE": 29.97,
        AUDIO: "audio",
      })),
    );
  });

  it("a source without audio: no audio group, the variants' bandwidth their own; fMP4 is version 7", () => {
    const layout = layoutOf("hls_abr_265_efficient_4k", { ...SOURCE_1080, hasAudio: false });
    const text = masterPlaylist(layout, codecsOf(layout));
    expect(text).not.toContain("#EXT-X-MEDIA");
    const parsed = parsedHls(text);
    expect(parsed.version).toBe(7);
    expect(parsed.playlists?.map((p) => [p.attributes.BANDWIDTH, p.attributes.AUDIO, p.attributes.CODECS])).toEqual(
      layout.renditions.map((r) => [r.bandwidth, undefined, codecsOf(layout).get(r.name)]),
    );
  });

  it("golden: an MPEG-TS ladder on a 360p source", () => {
    const layout = layoutOf("hls_abr_264_basic", SOURCE_360);
    const codecs = new Map([
      ["360p", "avc1.64001e"],
      ["audio", "mp4a.40.2"],
    ]);
    expect(masterPlaylist(layout, codecs)).toBe(
      [
        "#EXTM3U",
        "#EXT-X-VERSION:6",
        "#EXT-X-INDEPENDENT-SEGMENTS",
        '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="audio",DEFAULT=YES,AUTOSELECT=YES,URI="audio/index.m3u8"',
        '#EXT-X-STREAM-INF:BANDWIDTH=952000,AVERAGE-BANDWIDTH=896000,CODECS="avc1.64001e,mp4a.40.2",RESOLUTION=640x360,FRAME-RATE=25.000,AUDIO="audio"',
        "360p/index.m3u8",
        "",
      ].join("\n"),
    );
  });
});

describe("mediaPlaylist (docs/playback.md#a-stream-that-grows)", () => {
  const durations = [2, 6, 6, 3.2];

  it("while the job runs: an EVENT playlist from media sequence 0, started at its beginning, no end", () => {
    const layout = layoutOf("hls_abr_264_basic");
    const parsed = parsedHls(mediaPlaylist(layout, durations, { ended: false }));
    expect(parsed.playlistType).toBe("EVENT");
    expect(parsed.endList).toBeUndefined();
    expect(parsed.mediaSequence).toBe(0);
    expect(parsed.start).toEqual({ timeOffset: 0, precise: false });
    expect(parsed.targetDuration).toBe(6);
    expect(parsed.segments.map((s) => [s.uri, s.duration, s.map])).toEqual([
      ["seg_00000.ts", 2, undefined],
      ["seg_00001.ts", 6, undefined],
      ["seg_00002.ts", 6, undefined],
      ["seg_00003.ts", 3.2, undefined],
    ]);
  });

  it("once ended: the VOD playlist over the same segments, with its end and no start", () => {
    const layout = layoutOf("hls_abr_264_basic");
    const text = mediaPlaylist(layout, durations, { ended: true });
    expect(text).not.toContain("#EXT-X-START");
    const parsed = parsedHls(text);
    expect(parsed.playlistType).toBe("VOD");
    expect(parsed.endList).toBe(true);
    expect(parsed.segments.map((s) => s.uri)).toEqual(["seg_00000.ts", "seg_00001.ts", "seg_00002.ts", "seg_00003.ts"]);
  });

  it("fMP4: every segment behind the rendition's init segment; no segment yet is a playlist still", () => {
    const layout = layoutOf("dash_abr_264_standard");
    const parsed = parsedHls(mediaPlaylist(layout, [2, 4], { ended: false }));
    expect(parsed.version).toBe(7);
    expect(parsed.segments.map((s) => [s.uri, s.map?.uri])).toEqual([
      ["seg_00000.m4s", "init.mp4"],
      ["seg_00001.m4s", "init.mp4"],
    ]);
    const empty = parsedHls(mediaPlaylist(layout, [], { ended: false }));
    expect(empty.segments).toEqual([]);
    expect(empty.playlistType).toBe("EVENT");
  });

  it("the live layouts date each segment from the first frame's encoding; the others never", () => {
    const live = layoutOf("live_hls_264_lowlatency");
    expect(live.programDateTime).toBe(true);
    const dated = parsedHls(mediaPlaylist(live, [1, 2, 2, 1.5], { ended: false, startedAt: STARTED }));
    expect(dated.segments.map((s) => s.programDateTime)).toEqual(
      [0, 1, 3, 5].map((seconds) => STARTED.getTime() + seconds * 1000),
    );
    // Without a start time there is nothing to date them by.
    expect(mediaPlaylist(live, [1, 2], { ended: false })).not.toContain("PROGRAM-DATE-TIME");
    for (const id of ["hls_abr_264_basic", "dash_abr_264_standard", "cmaf_abr_265_standard"]) {
      expect(layoutOf(id).programDateTime, id).toBe(false);
      expect(mediaPlaylist(layoutOf(id), [2, 4], { ended: false, startedAt: STARTED }), id).not.toContain(
        "PROGRAM-DATE-TIME",
      );
    }
  });

  it("TARGETDURATION is the preset's segment length, and every segment its plan makes rounds to no more", () => {
    fc.assert(
      fc.property(fc.constantFrom(...LADDERS), fc.integer({ min: 100, max: 120_000 }), ([id, recipe], ms) => {
        const layout = layoutOf(id);
        const boundaries = segmentBoundaries(ms / 1000, recipe.gopSeconds, recipe.packaging.segmentSeconds);
        const lengths = boundaries.slice(1).map((end, i) => end - boundaries[i]);
        const parsed = parsedHls(mediaPlaylist(layout, lengths, { ended: true }));
        expect(parsed.targetDuration).toBe(Math.ceil(recipe.packaging.segmentSeconds));
        for (const segment of parsed.segments) {
          expect(Math.round(segment.duration)).toBeLessThanOrEqual(parsed.targetDuration ?? 0);
        }
      }),
    );
  });

  it("golden: a growing live playlist, and an ended MPEG-TS one", () => {
    expect(mediaPlaylist(layoutOf("live_hls_264_lowlatency"), [1, 2], { ended: false, startedAt: STARTED })).toBe(
      [
        "#EXTM3U",
        "#EXT-X-VERSION:7",
        "#EXT-X-TARGETDURATION:2",
        "#EXT-X-MEDIA-SEQUENCE:0",
        "#EXT-X-PLAYLIST-TYPE:EVENT",
        "#EXT-X-INDEPENDENT-SEGMENTS",
        "#EXT-X-START:TIME-OFFSET=0",
        '#EXT-X-MAP:URI="init.mp4"',
        "#EXT-X-PROGRAM-DATE-TIME:2026-01-02T03:04:05.000Z",
        "#EXTINF:1.000000,",
        "seg_00000.m4s",
        "#EXT-X-PROGRAM-DATE-TIME:2026-01-02T03:04:06.000Z",
        "#EXTINF:2.000000,",
        "seg_00001.m4s",
        "",
      ].join("\n"),
    );
    expect(mediaPlaylist(layoutOf("hls_abr_264_basic"), [2, 6, 3.2], { ended: true })).toBe(
      [
        "#EXTM3U",
        "#EXT-X-VERSION:6",
        "#EXT-X-TARGETDURATION:6",
        "#EXT-X-MEDIA-SEQUENCE:0",
        "#EXT-X-PLAYLIST-TYPE:VOD",
        "#EXT-X-INDEPENDENT-SEGMENTS",
        "#EXTINF:2.000000,",
        "seg_00000.ts",
        "#EXTINF:6.000000,",
        "seg_00001.ts",
        "#EXTINF:3.200000,",
        "seg_00002.ts",
        "#EXT-X-ENDLIST",
        "",
      ].join("\n"),
    );
  });
});

describe("mpd (docs/playback.md#a-stream-that-grows)", () => {
  const TIMESCALE = 90_000;
  /** 1024 AAC samples at 48 kHz: the audio's first sample before the video's. */
  const PRIMING = 1024 / 48_000;
  const durations = [2, 4, 4, 4, 1.5];
  const segmentsOf = (layout: StreamLayout) =>
    new Map<string, RenditionSegments>(
      layout.renditions.map((r) => [
        r.name,
        { codecs: codecsOf(layout).get(r.name) ?? "", durations, ...(r.kind === "audio" && { start: 10 - PRIMING }) },
      ]),
    );

  it("while the job runs: dynamic, from the stream's start, refreshed every segment length, with the server's clock", () => {
    const layout = layoutOf("dash_abr_264_standard");
    const text = mpd(layout, segmentsOf(layout), { ended: false, startedAt: STARTED, now: NOW });
    const root = stringToMpdXml(text);
    expect(root.getAttribute("type")).toBe("dynamic");
    expect(root.getAttribute("availabilityStartTime")).toBe(STARTED.toISOString());
    expect(root.getAttribute("publishTime")).toBe(NOW.toISOString());
    expect(root.getAttribute("minimumUpdatePeriod")).toBe("PT4S");
    expect(root.hasAttribute("mediaPresentationDuration")).toBe(false);
    expect(parseUTCTiming(text)).toEqual({
      schemeIdUri: "urn:mpeg:dash:utc:direct:2014",
      value: NOW.getTime(),
      method: "DIRECT",
    });

    const parsed = parseMpd(text, { manifestUri: "https://h/play/j/t/manifest.mpd", NOW: NOW.getTime() });
    const videos = layout.renditions.filter((r) => r.kind === "video");
    expect(parsed.playlists.map((p) => [p.attributes.NAME, p.attributes.BANDWIDTH, p.attributes.CODECS])).toEqual(
      videos.map((v) => [v.name, v.bandwidth, codecsOf(layout).get(v.name)]),
    );
    const top = parsed.playlists[0];
    expect(top.endList).toBe(false);
    expect(top.segments.map((s) => [s.number, s.uri, s.duration, s.map?.uri])).toEqual(
      durations.map((d, i) => [i, `1080p/seg_${String(i).padStart(5, "0")}.m4s`, d, "1080p/init.mp4"]),
    );
    // presentationTimeOffset takes the stream's clock back to the period's 0: the video starts there, the audio its priming before.
    expect(top.segments.map((s) => s.presentationTime)).toEqual([0, 2, 6, 10, 14]);
    const [audio] = Object.values(parsed.mediaGroups.AUDIO).flatMap((group) => Object.values(group));
    expect(audio.playlists[0].attributes.CODECS).toBe("mp4a.40.2");
    expect(audio.playlists[0].segments[0].uri).toBe("audio/seg_00000.m4s");
    expect(audio.playlists[0].segments[0].presentationTime).toBeCloseTo(-PRIMING, 4);
  });

  it("once ended: static, with the stream's duration and no clock", () => {
    const layout = layoutOf("cmaf_abr_265_standard");
    const text = mpd(layout, segmentsOf(layout), { ended: true, startedAt: STARTED, now: NOW });
    const root = stringToMpdXml(text);
    expect(root.getAttribute("type")).toBe("static");
    expect(root.getAttribute("mediaPresentationDuration")).toBe("PT15.5S");
    expect(root.hasAttribute("availabilityStartTime")).toBe(false);
    expect(parseUTCTiming(text)).toBeNull();
    const parsed = parseMpd(text, { manifestUri: "https://h/m.mpd" });
    expect(parsed.duration).toBe(15.5);
    expect(parsed.playlists.every((p) => p.endList)).toBe(true);
    expect(parsed.playlists.map((p) => p.segments.length)).toEqual(parsed.playlists.map(() => durations.length));
  });

  it("the SegmentTimeline folds runs of equal lengths into r, every time on the 90 kHz clock from where the rendition starts", () => {
    const layout = layoutOf("dash_abr_264_standard", { ...SOURCE_360, hasAudio: false });
    const text = mpd(layout, new Map([["360p", { codecs: "avc1.64001e", durations }]]), {
      ended: true,
      startedAt: STARTED,
      now: NOW,
    });
    expect(text).toContain(
      '<SegmentTimeline><S t="900000" d="180000"/><S t="1080000" d="360000" r="2"/><S t="2160000" d="135000"/></SegmentTimeline>',
    );
    expect(text).toContain(`presentationTimeOffset="${10 * TIMESCALE}"`);
  });

  it("property: the timeline's entries, expanded, are every segment once, contiguous, each at its rounded time, no two neighbours of one length", () => {
    const layout = layoutOf("dash_abr_264_standard", { ...SOURCE_360, hasAudio: false });
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant(4), fc.constant(4.004), fc.double({ min: 0.05, max: 8, noNaN: true })), {
          minLength: 1,
          maxLength: 60,
        }),
        fc.double({ min: 9, max: 11, noNaN: true }),
        (lengths, start) => {
          const text = mpd(layout, new Map([["360p", { codecs: "avc1.64001e", start, durations: lengths }]]), {
            ended: true,
            startedAt: STARTED,
            now: NOW,
          });
          const entries = [...text.matchAll(/<S t="(\d+)" d="(\d+)"(?: r="(\d+)")?\/>/g)].map((m) => ({
            t: Number(m[1]),
            d: Number(m[2]),
            r: Number(m[3] ?? 0),
          }));
          const times = entries.flatMap(({ t, d, r }) => Array.from({ length: r + 1 }, (_, i) => t + i * d));
          expect(times).toHaveLength(lengths.length);
          let elapsed = start;
          for (const [i, time] of times.entries()) {
            expect(time).toBe(Math.round(elapsed * TIMESCALE));
            elapsed += lengths[i];
          }
          for (let i = 1; i < entries.length; i++) {
            expect(entries[i].t).toBe(entries[i - 1].t + entries[i - 1].d * (entries[i - 1].r + 1));
            expect(entries[i].d).not.toBe(entries[i - 1].d);
          }
        },
      ),
    );
  });

  it("golden: a one-rung stream, ended", () => {
    const layout = layoutOf("cmaf_abr_265_standard", { ...SOURCE_360, hasAudio: false });
    const text = mpd(layout, new Map([["360p", { codecs: "hvc1.1.6.L90.90", durations: [2, 4, 4, 1.2] }]]), {
      ended: true,
      startedAt: STARTED,
      now: NOW,
    });
    expect(text).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n' +
        '<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="static" mediaPresentationDuration="PT11.2S" minBufferTime="PT4S">' +
        '<Period id="0" start="PT0S">' +
        '<AdaptationSet id="0" contentType="video" mimeType="video/mp4" segmentAlignment="true" startWithSAP="1">' +
        '<Representation id="360p" bandwidth="963000" codecs="hvc1.1.6.L90.90" width="640" height="360" frameRate="25/1">' +
        '<SegmentTemplate timescale="90000" presentationTimeOffset="900000" startNumber="0" initialization="360p/init.mp4" media="360p/seg_$Number%05d$.m4s">' +
        '<SegmentTimeline><S t="900000" d="180000"/><S t="1080000" d="360000" r="1"/><S t="1800000" d="108000"/></SegmentTimeline>' +
        "</SegmentTemplate></Representation></AdaptationSet></Period></MPD>\n",
    );
  });
});

describe("parseMember (docs/playback.md#the-link)", () => {
  /** The name a member has under the stream's link. */
  function pathOf(layout: StreamLayout, member: StreamMember): string {
    switch (member.kind) {
      case "master":
        return "master.m3u8";
      case "mpd":
        return "manifest.mpd";
      case "playlist":
        return `${member.rendition}/index.m3u8`;
      case "init":
        return `${member.rendition}/init.mp4`;
      case "segment":
        return `${member.rendition}/${segmentName(member.index, layout.segmentType)}`;
    }
  }

  /** Whether the layout has this member: its manifests, and per rendition a playlist (HLS), an init segment (fMP4), segments. */
  function hasMember(layout: StreamLayout, member: StreamMember): boolean {
    if (member.kind === "master") return layout.manifest !== "dash";
    if (member.kind === "mpd") return layout.manifest !== "hls";
    if (!layout.renditions.some((r) => r.name === member.rendition)) return false;
    if (member.kind === "playlist") return layout.manifest !== "dash";
    if (member.kind === "init") return layout.segmentType === "fmp4";
    return Number.isInteger(member.index) && member.index >= 0 && member.index <= 999_999_999;
  }

  const layouts = fc
    .record({
      ladder: fc.constantFrom(...LADDERS),
      height: fc.constantFrom(180, 360, 480, 720, 1080, 2160),
      hasAudio: fc.boolean(),
    })
    .map(({ ladder: [id, recipe], height, hasAudio }) => ({
      id,
      layout: streamLayout(recipe, { width: Math.round((height * 16) / 9), height, frameRate: "30/1", hasAudio }),
    }));

  const membersOf = (layout: StreamLayout) =>
    fc.oneof(
      fc.constant<StreamMember>({ kind: "master" }),
      fc.constant<StreamMember>({ kind: "mpd" }),
      fc.record({
        kind: fc.constantFrom("playlist" as const, "init" as const),
        rendition: fc.constantFrom(...layout.renditions.map((r) => r.name)),
      }),
      fc.record({
        kind: fc.constant("segment" as const),
        rendition: fc.constantFrom(...layout.renditions.map((r) => r.name)),
        index: fc.oneof(fc.integer({ min: 0, max: 99_999 }), fc.integer({ min: 100_000, max: 999_999_999 })),
      }),
    );

  it("every member a layout has parses to itself", () => {
    fc.assert(
      fc.property(
        layouts.chain(({ layout }) => fc.tuple(fc.constant(layout), membersOf(layout))),
        ([layout, member]) => {
          if (!hasMember(layout, member)) return;
          expect(parseMember(layout, pathOf(layout, member))).toEqual(member);
        },
      ),
    );
  });

  it("a name parses only to a member the layout has, whose name it is; anything else is null", () => {
    const pieces = fc.constantFrom(
      "1080p",
      "720p",
      "360p",
      "0360p",
      "1440p",
      "audio",
      "video",
      "/",
      "//",
      "..",
      ".",
      "%2F",
      "%2f",
      "%2e%2e",
      "\\",
      "seg_",
      "0",
      "00001",
      "0001",
      "000001",
      "99999",
      "100000",
      ".ts",
      ".m4s",
      ".mp4",
      ".TS",
      ".tmp",
      "init.mp4",
      "init_0.mp4",
      "index.m3u8",
      "master.m3u8",
      "manifest.mpd",
      "?x=1",
      " ",
    );
    const names = fc.oneof(
      fc.array(pieces, { maxLength: 6 }).map((p) => p.join("")),
      fc.string(),
    );
    fc.assert(
      fc.property(layouts, names, ({ layout }, name) => {
        const member = parseMember(layout, name);
        if (member === null) return;
        expect(hasMember(layout, member), `${name} is not a member`).toBe(true);
        expect(pathOf(layout, member)).toBe(name);
      }),
      { numRuns: 2000 },
    );
  });

  it("exact cases: other renditions, climbing out, encoded slashes, other types, four-digit numbers", () => {
    // 720p, 480p, 360p and audio; MPEG-TS segments; HLS only.
    const hls = layoutOf("hls_abr_264_basic");
    expect(parseMember(hls, "master.m3u8")).toEqual({ kind: "master" });
    expect(parseMember(hls, "720p/index.m3u8")).toEqual({ kind: "playlist", rendition: "720p" });
    expect(parseMember(hls, "audio/seg_00042.ts")).toEqual({ kind: "segment", rendition: "audio", index: 42 });
    expect(parseMember(hls, "360p/seg_123456.ts")).toEqual({ kind: "segment", rendition: "360p", index: 123456 });
    for (const name of [
      "manifest.mpd",
      "1080p/index.m3u8",
      "240p/seg_00000.ts",
      "0720p/index.m3u8",
      "720P/index.m3u8",
      "720p/../audio/index.m3u8",
      "../master.m3u8",
      "./master.m3u8",
      "720p/./index.m3u8",
      "720p/..",
      "..",
      "720p%2Findex.m3u8",
      "720p%2fseg_00000.ts",
      "720p/seg_00000.ts%2F",
      "720p\\index.m3u8",
      "720p/seg_00000.m4s",
      "720p/init.mp4",
      "720p/seg_00000.mp4",
      "720p/seg_00000.TS",
      "720p/seg_00000.ts.tmp",
      "720p/seg_0001.ts",
      "720p/seg_000001.ts",
      "720p/seg_1.ts",
      "720p/seg_1000000000.ts",
      "720p/seg_-0001.ts",
      "/master.m3u8",
      "master.m3u8/",
      "720p//index.m3u8",
      "720p/index.m3u8/",
      "720p/index.m3u8?x=1",
      "720p/",
      "720p",
      "",
    ]) {
      expect(parseMember(hls, name), name).toBeNull();
    }
    const silent = layoutOf("hls_abr_264_basic", { ...SOURCE_1080, hasAudio: false });
    expect(parseMember(silent, "audio/index.m3u8")).toBeNull();
    // DASH: the MPD and fMP4, no HLS playlist.
    const dash = layoutOf("dash_abr_264_standard");
    expect(parseMember(dash, "manifest.mpd")).toEqual({ kind: "mpd" });
    expect(parseMember(dash, "1080p/init.mp4")).toEqual({ kind: "init", rendition: "1080p" });
    expect(parseMember(dash, "1080p/seg_00000.m4s")).toEqual({ kind: "segment", rendition: "1080p", index: 0 });
    for (const name of ["master.m3u8", "1080p/index.m3u8", "1080p/seg_00000.ts", "1080p/init_0.mp4"]) {
      expect(parseMember(dash, name), name).toBeNull();
    }
    // CMAF: both manifests over one set of fMP4 segments.
    const cmaf = layoutOf("cmaf_abr_265_standard");
    expect(parseMember(cmaf, "master.m3u8")).toEqual({ kind: "master" });
    expect(parseMember(cmaf, "manifest.mpd")).toEqual({ kind: "mpd" });
    expect(parseMember(cmaf, "720p/index.m3u8")).toEqual({ kind: "playlist", rendition: "720p" });
  });
});
