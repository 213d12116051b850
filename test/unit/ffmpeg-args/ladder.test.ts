import { describe, expect, it } from "vitest";
import { PRESET_DEFINITIONS, type PresetDefinition } from "../../../domain/presets/definitions";
import { type LadderRecipe, selectRungs } from "../../../domain/presets/recipes";
import { streamRecipe } from "../../../domain/stream/layout";
import { buildPresetCommands } from "../../../encoder/ffmpeg/args";
import { ladderFilter, rungRateArgs } from "../../../encoder/ffmpeg/args/ladder";
import { audioStreamCommand, partStreamCommand, wholeStreamCommand } from "../../../encoder/ffmpeg/args/stream";
import type { ProbeSummary } from "../../../encoder/ffmpeg/probe";
import { HEAD, IN, MAX_PICTURE, OUT, PROBE_1080, PROBE_480, PROBE_NO_AUDIO, flagValue } from "./fixtures";

/** The source's first video frame on its own clock: the streams start it at 10 s (MEDIA_OFFSET_SECONDS). */
const VIDEO_START = 0.021;
/** A ranged source's loopback proxy (encoder/source/ranged.ts). */
const PROXY = "http://127.0.0.1:41234/source";

function recipeOf(id: string): LadderRecipe {
  const recipe = streamRecipe(id);
  if (!recipe) throw new Error(`${id} is not a stream`);
  return recipe;
}

const whole = (id: string, probe: ProbeSummary = PROBE_1080) =>
  wholeStreamCommand({ presetId: id, input: IN, outDir: OUT, probe }, recipeOf(id), VIDEO_START).args;

/** A part of segments 2 and 3 (8 s to 20 s) of a 1080p30 source. */
const part = (id: string) =>
  partStreamCommand(
    recipeOf(id),
    {
      source: { path: IN },
      video: { index: 0, height: 1080, fps: 30, start: VIDEO_START },
      from: 8,
      to: 20,
      firstSegment: 2,
    },
    OUT,
  ).args;

const audio = (id: string) =>
  audioStreamCommand(
    recipeOf(id),
    { source: { path: IN }, audioIndex: 1, videoStart: VIDEO_START, sourceHeight: 1080 },
    OUT,
  ).args;

const LADDERS = Object.entries<PresetDefinition>(PRESET_DEFINITIONS).flatMap(
  ([id, { recipe }]): [string, LadderRecipe][] => (recipe.kind === "ladder" ? [[id, recipe]] : []),
);

/** The head of a part sought to 7 s: a second before its first frame, as the seek lands on the keyframe before. */
const SOUGHT_HEAD = [...HEAD.slice(0, 7), "-ss", "7.000000", ...HEAD.slice(7)];

/** The stream's output options, as the HLS muxer writes every streaming preset's segments. */
function hlsOut(o: { seconds: number; type: "mpegts" | "fmp4"; offset: string; start: number; map: string }) {
  return [
    "-output_ts_offset",
    o.offset,
    "-f",
    "hls",
    "-hls_time",
    String(o.seconds),
    // An event playlist that keeps every segment: the publisher reads it to learn which are whole.
    "-hls_playlist_type",
    "event",
    "-hls_list_size",
    "0",
    "-hls_segment_type",
    o.type,
    // fMP4 without an edit list, so every run of a stream writes the same init segment.
    ...(o.type === "fmp4" ? ["-hls_fmp4_init_filename", "init.mp4", "-hls_segment_options", "use_editlist=0"] : []),
    // Segments renamed into place only once whole.
    "-hls_flags",
    "independent_segments+temp_file",
    "-start_number",
    String(o.start),
    "-hls_segment_filename",
    `${OUT}/%v/seg_%05d.${o.type === "mpegts" ? "ts" : "m4s"}`,
    "-var_stream_map",
    o.map,
    `${OUT}/%v/index.m3u8`,
  ];
}

const AAC_128 = ["-c:a", "aac", "-ar", "48000", "-ac", "2", "-b:a", "128k"];
const X264_GOP_60 = ["-c:v", "libx264", "-preset", "veryfast", "-g", "60", "-keyint_min", "60", "-sc_threshold", "0"];
const X265_GOP_60 = [
  "-c:v",
  "libx265",
  "-preset",
  "veryfast",
  "-g",
  "60",
  "-keyint_min",
  "60",
  "-x265-params",
  "log-level=error:scenecut=0:open-gop=0",
  "-tag:v",
  "hvc1",
];
const rates = (...rungs: [number, number, number][]) =>
  rungs.flatMap(([b, max, buf], i) => [
    `-b:v:${i}`,
    `${b}k`,
    `-maxrate:v:${i}`,
    `${max}k`,
    `-bufsize:v:${i}`,
    `${buf}k`,
  ]);
const maps = (count: number) => Array.from({ length: count }, (_, i) => ["-map", `[v${i}]`]).flat();

const CASCADE_720 = "scale=-2:720,format=yuv420p,split=2[v0][c0];[c0]scale=-2:480,split=2[v1][c1];[c1]scale=-2:360[v2]";
const CASCADE_1080_4 =
  "scale=-2:1080,format=yuv420p,split=2[v0][c0];[c0]scale=-2:720,split=2[v1][c1];[c1]scale=-2:480,split=2[v2][c2];[c2]scale=-2:360[v3]";
const CASCADE_1080_3 =
  "scale=-2:1080,format=yuv420p,split=2[v0][c0];[c0]scale=-2:720,split=2[v1][c1];[c1]scale=-2:480[v2]";
/** A part's frames by their times: from half a frame before its first to half a frame before the next part's. */
const PART_TRIM = "trim=start=8.004333:end=20.004333,";

describe("hls_abr_264_basic: MPEG-TS segments", () => {
  const videoOut = { seconds: 6, type: "mpegts" as const, offset: "9.979000" };
  const rungRates = rates([2800, 2996, 4200], [1400, 1498, 2100], [800, 856, 1200]);

  it("the whole stream: one decode, the rungs cascaded, each a rendition, the audio one rendition of its own", () => {
    expect(whole("hls_abr_264_basic")).toEqual([
      ...HEAD,
      // The source's clock kept, so a whole stream's and a part's timestamps agree.
      "-copyts",
      "-filter_complex",
      `[0:0]${CASCADE_720}`,
      ...maps(3),
      "-map",
      "0:1",
      ...X264_GOP_60,
      ...rungRates,
      ...AAC_128,
      ...hlsOut({ ...videoOut, start: 0, map: "v:0,name:720p v:1,name:480p v:2,name:360p a:0,name:audio" }),
    ]);
  });

  it("a part: sought a second early, trimmed to its frames, its segments numbered where they sit, no audio", () => {
    expect(part("hls_abr_264_basic")).toEqual([
      ...SOUGHT_HEAD,
      "-copyts",
      "-filter_complex",
      `[0:0]${PART_TRIM}${CASCADE_720}`,
      ...maps(3),
      ...X264_GOP_60,
      ...rungRates,
      ...hlsOut({ ...videoOut, start: 2, map: "v:0,name:720p v:1,name:480p v:2,name:360p" }),
    ]);
  });

  it("the audio: the whole source's, at the top kept rung's bitrate, on the video's clock", () => {
    expect(audio("hls_abr_264_basic")).toEqual([
      ...HEAD,
      "-copyts",
      "-map",
      "0:1",
      ...AAC_128,
      ...hlsOut({ ...videoOut, start: 0, map: "a:0,name:audio" }),
    ]);
  });
});

describe("hls_abr_av1_efficient: fMP4 segments", () => {
  const out = { seconds: 6, type: "fmp4" as const, offset: "9.979000" };
  const av1 = ["-c:v", "libsvtav1", "-preset", "10", "-g", "60"];
  const rungRates = rates([2500, 2675, 3750], [1300, 1391, 1950], [700, 749, 1050], [400, 428, 600]);

  it("the whole stream", () => {
    expect(whole("hls_abr_av1_efficient")).toEqual([
      ...HEAD,
      "-copyts",
      "-filter_complex",
      `[0:0]${CASCADE_1080_4}`,
      ...maps(4),
      "-map",
      "0:1",
      ...av1,
      ...rungRates,
      ...AAC_128,
      ...hlsOut({ ...out, start: 0, map: "v:0,name:1080p v:1,name:720p v:2,name:480p v:3,name:360p a:0,name:audio" }),
    ]);
  });

  it("a part", () => {
    expect(part("hls_abr_av1_efficient")).toEqual([
      ...SOUGHT_HEAD,
      "-copyts",
      "-filter_complex",
      `[0:0]${PART_TRIM}${CASCADE_1080_4}`,
      ...maps(4),
      ...av1,
      ...rungRates,
      ...hlsOut({ ...out, start: 2, map: "v:0,name:1080p v:1,name:720p v:2,name:480p v:3,name:360p" }),
    ]);
  });

  it("the audio", () => {
    expect(audio("hls_abr_av1_efficient")).toEqual([
      ...HEAD,
      "-copyts",
      "-map",
      "0:1",
      ...AAC_128,
      ...hlsOut({ ...out, start: 0, map: "a:0,name:audio" }),
    ]);
  });
});

describe("dash_abr_264_standard: the same fMP4 segments, for the MPD", () => {
  const out = { seconds: 4, type: "fmp4" as const, offset: "9.979000" };
  const rungRates = rates([5000, 5350, 7500], [2800, 2996, 4200], [1400, 1498, 2100], [800, 856, 1200]);

  it("the whole stream", () => {
    expect(whole("dash_abr_264_standard")).toEqual([
      ...HEAD,
      "-copyts",
      "-filter_complex",
      `[0:0]${CASCADE_1080_4}`,
      ...maps(4),
      "-map",
      "0:1",
      ...X264_GOP_60,
      ...rungRates,
      ...AAC_128,
      ...hlsOut({ ...out, start: 0, map: "v:0,name:1080p v:1,name:720p v:2,name:480p v:3,name:360p a:0,name:audio" }),
    ]);
  });

  it("a part", () => {
    expect(part("dash_abr_264_standard")).toEqual([
      ...SOUGHT_HEAD,
      "-copyts",
      "-filter_complex",
      `[0:0]${PART_TRIM}${CASCADE_1080_4}`,
      ...maps(4),
      ...X264_GOP_60,
      ...rungRates,
      ...hlsOut({ ...out, start: 2, map: "v:0,name:1080p v:1,name:720p v:2,name:480p v:3,name:360p" }),
    ]);
  });

  it("the audio", () => {
    expect(audio("dash_abr_264_standard")).toEqual([
      ...HEAD,
      "-copyts",
      "-map",
      "0:1",
      ...AAC_128,
      ...hlsOut({ ...out, start: 0, map: "a:0,name:audio" }),
    ]);
  });
});

describe("cmaf_abr_265_standard: HEVC tagged hvc1 in closed GOPs, fMP4", () => {
  const out = { seconds: 4, type: "fmp4" as const, offset: "9.979000" };
  const rungRates = rates([3500, 3745, 5250], [1800, 1926, 2700], [900, 963, 1350]);

  it("the whole stream", () => {
    expect(whole("cmaf_abr_265_standard")).toEqual([
      ...HEAD,
      "-copyts",
      "-filter_complex",
      `[0:0]${CASCADE_1080_3}`,
      ...maps(3),
      "-map",
      "0:1",
      ...X265_GOP_60,
      ...rungRates,
      ...AAC_128,
      ...hlsOut({ ...out, start: 0, map: "v:0,name:1080p v:1,name:720p v:2,name:480p a:0,name:audio" }),
    ]);
  });

  it("a part", () => {
    expect(part("cmaf_abr_265_standard")).toEqual([
      ...SOUGHT_HEAD,
      "-copyts",
      "-filter_complex",
      `[0:0]${PART_TRIM}${CASCADE_1080_3}`,
      ...maps(3),
      ...X265_GOP_60,
      ...rungRates,
      ...hlsOut({ ...out, start: 2, map: "v:0,name:1080p v:1,name:720p v:2,name:480p" }),
    ]);
  });

  it("the audio", () => {
    expect(audio("cmaf_abr_265_standard")).toEqual([
      ...HEAD,
      "-copyts",
      "-map",
      "0:1",
      ...AAC_128,
      ...hlsOut({ ...out, start: 0, map: "a:0,name:audio" }),
    ]);
  });
});

describe("stream commands: sources and edges", () => {
  it("a ranged source is read through its proxy by a container demuxer only; the first part is not sought, the last trims no end", () => {
    const ranged = { path: PROXY, ranged: true };
    const rangedHead = [
      "-hide_banner",
      "-nostdin",
      "-y",
      "-protocol_whitelist",
      "http,tcp",
      "-format_whitelist",
      "mov,matroska,mpegts,avi,flv,mxf,ogg,asf,nut,mpeg,wav,mp3,aac",
      "-max_pixels",
      MAX_PICTURE,
    ];
    const first = partStreamCommand(
      recipeOf("hls_abr_264_basic"),
      { source: ranged, video: { index: 0, height: 1080, fps: 30, start: 0 }, from: 0, firstSegment: 0 },
      OUT,
    ).args;
    expect(first.slice(0, first.indexOf("-loglevel"))).toEqual([...rangedHead, "-i", PROXY]);
    expect(flagValue(first, "-filter_complex")).toBe(`[0:0]trim=start=0.000000,${CASCADE_720}`);
    expect(flagValue(first, "-output_ts_offset")).toBe("10.000000");
    const last = partStreamCommand(
      recipeOf("hls_abr_264_basic"),
      { source: ranged, video: { index: 0, height: 1080, fps: 30, start: 0 }, from: 50, firstSegment: 9 },
      OUT,
    ).args;
    expect(last.slice(0, last.indexOf("-loglevel"))).toEqual([...rangedHead, "-ss", "49.000000", "-i", PROXY]);
    expect(flagValue(last, "-filter_complex")).toBe(`[0:0]trim=start=49.983333,${CASCADE_720}`);
    expect(flagValue(last, "-start_number")).toBe("9");
    const wholeRanged = wholeStreamCommand(
      { presetId: "hls_abr_264_basic", input: PROXY, outDir: OUT, probe: PROBE_1080 },
      recipeOf("hls_abr_264_basic"),
      0,
      ranged,
    ).args;
    expect(wholeRanged.slice(0, wholeRanged.indexOf("-loglevel"))).toEqual([...rangedHead, "-i", PROXY]);
  });

  it("a part starting within the first second is sought from the file's start", () => {
    const args = partStreamCommand(
      recipeOf("hls_abr_264_basic"),
      {
        source: { path: IN },
        video: { index: 0, height: 1080, fps: 30, start: 0 },
        from: 0.5,
        to: 6.5,
        firstSegment: 1,
      },
      OUT,
    ).args;
    expect(args.slice(0, args.indexOf("-i"))).toEqual([...HEAD.slice(0, 7), "-ss", "0.000000"]);
    expect(flagValue(args, "-filter_complex")).toBe(`[0:0]trim=start=0.483333:end=6.483333,${CASCADE_720}`);
  });

  it("live_hls_264_lowlatency: 1 s keyframes, 2 s segments, a buffer of one second's bits", () => {
    const args = whole("live_hls_264_lowlatency");
    expect(flagValue(args, "-g")).toBe("30");
    expect(flagValue(args, "-hls_time")).toBe("2");
    expect(flagValue(args, "-hls_segment_type")).toBe("fmp4");
    expect(flagValue(args, "-bufsize:v:0")).toBe("2800k");
  });

  it("a source without audio: no audio map, encoder or rendition", () => {
    const args = wholeStreamCommand(
      { presetId: "dash_abr_264_standard", input: IN, outDir: OUT, probe: PROBE_NO_AUDIO },
      recipeOf("dash_abr_264_standard"),
      0,
    ).args;
    expect(args).not.toContain("0:1");
    expect(args).not.toContain("-c:a");
    expect(flagValue(args, "-var_stream_map")).toBe("v:0,name:1080p v:1,name:720p v:2,name:480p v:3,name:360p");
  });

  it("a source without video is refused as unsuitable", () => {
    expect(() => whole("hls_abr_264_basic", { ...PROBE_1080, video: null })).toThrow(
      "The source has no video stream; preset hls_abr_264_basic needs one.",
    );
  });

  it("a ladder is not built as a preset command: it is a stream", () => {
    expect(() => buildPresetCommands("hls_abr_264_basic", { input: IN, outDir: OUT, probe: PROBE_1080 })).toThrow(
      /streaming preset/,
    );
  });

  it.each(LADDERS)("%s: one input, the rungs split from one decode, its keyframes and segments", (id, recipe) => {
    const args = whole(id);
    expect(args.slice(0, 9)).toEqual(HEAD.slice(0, 9));
    expect(args.filter((a) => a === "-i")).toHaveLength(1);
    expect(flagValue(args, "-progress")).toBe("pipe:1");
    expect(flagValue(args, "-g")).toBe(String(recipe.gopSeconds * 30));
    expect(flagValue(args, "-maxrate:v:0")).toBe(`${selectRungs(recipe.rungs, 1080)[0].maxrate}k`);
    expect(flagValue(args, "-f")).toBe("hls");
    expect(flagValue(args, "-hls_time")).toBe(String(recipe.packaging.segmentSeconds));
    const fmp4 = recipe.packaging.format !== "hls" || recipe.packaging.segmentType === "fmp4";
    expect(flagValue(args, "-hls_segment_type")).toBe(fmp4 ? "fmp4" : "mpegts");
    // The muxer cuts a segment at a keyframe: the interval divides the segment length.
    expect(recipe.packaging.segmentSeconds % recipe.gopSeconds).toBe(0);
  });
});

describe("ladder rungs (ladderFilter, rungRateArgs)", () => {
  const rungsOf = (id: string, height: number) => selectRungs(recipeOf(id).rungs, height);

  it("each rung scaled from the one above it, the first converted to 4:2:0; one rung needs no split", () => {
    expect(ladderFilter("[0:3]", rungsOf("hls_abr_264_basic", 1080))).toBe(`[0:3]${CASCADE_720}`);
    expect(ladderFilter("[0:0]", rungsOf("hls_abr_265_efficient_4k", 480))).toBe(
      "[0:0]scale=-2:480,format=yuv420p[v0]",
    );
  });

  it("rates per rung, by output stream index", () => {
    expect(rungRateArgs(rungsOf("hls_abr_264_basic", 480))).toEqual(rates([1400, 1498, 2100], [800, 856, 1200]));
  });

  it("drops the rungs above a 480p source; the 4K ladder keeps its 480p rung", () => {
    const args = whole("hls_abr_264_standard", PROBE_480);
    expect(flagValue(args, "-filter_complex")).toBe(
      "[0:0]scale=-2:480,format=yuv420p,split=2[v0][c0];[c0]scale=-2:360[v1]",
    );
    expect(flagValue(args, "-var_stream_map")).toBe("v:0,name:480p v:1,name:360p a:0,name:audio");
    expect(flagValue(args, "-g")).toBe("50");
    expect(args).not.toContain("-b:v:2");
    expect(flagValue(whole("hls_abr_265_efficient_4k", PROBE_480), "-var_stream_map")).toBe(
      "v:0,name:480p a:0,name:audio",
    );
  });

  it("keeps the lowest rung, scaled down to the source, when every rung is above it; the audio at that rung's rate", () => {
    const rungs = PRESET_DEFINITIONS.hls_abr_264_basic.recipe.rungs;
    expect(selectRungs(rungs, 241)).toEqual([{ ...rungs[2], height: 240 }]);
    const args = whole("hls_abr_264_basic", {
      ...PROBE_1080,
      video: { ...PROBE_1080.video!, width: 320, height: 180 },
    });
    expect(flagValue(args, "-filter_complex")).toBe("[0:0]scale=-2:180,format=yuv420p[v0]");
    expect(flagValue(args, "-var_stream_map")).toBe("v:0,name:180p a:0,name:audio");
    expect(flagValue(args, "-b:a")).toBe("96k");
  });

  it("every rung's maxrate (its BANDWIDTH) is its bitrate to 1.1 × it, and the rungs run highest first", () => {
    for (const [, recipe] of LADDERS) {
      for (const r of recipe.rungs) {
        expect(r.maxrate).toBeGreaterThanOrEqual(r.videoBitrate);
        expect(r.maxrate).toBeLessThanOrEqual(r.videoBitrate * 1.1);
      }
      expect(recipe.rungs.map((r) => r.height)).toEqual([...recipe.rungs.map((r) => r.height)].sort((a, b) => b - a));
    }
  });
});
