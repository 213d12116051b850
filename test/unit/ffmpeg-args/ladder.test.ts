import { describe, expect, it } from "vitest";
import { buildPresetCommands } from "../../../encoder/ffmpeg/args";
import { PRESET_DEFINITIONS, type PresetDefinition } from "../../../domain/presets/definitions";
import { selectRungs, type LadderRecipe } from "../../../domain/presets/recipes";
import { HEAD, IN, MAX_PICTURE, OUT, PROBE_1080, PROBE_480, PROBE_NO_AUDIO, flagValue } from "./fixtures";

const argsOf = (id: string, probe = PROBE_1080) => {
  const plan = buildPresetCommands(id, { input: IN, outDir: OUT, probe });
  expect(plan.steps).toHaveLength(1);
  expect(plan.output).toEqual({ kind: "zip" });
  const step = plan.steps[0];
  if (step.kind !== "run") throw new Error("expected a run step");
  return step.command.args;
};
const LADDERS = Object.entries<PresetDefinition>(PRESET_DEFINITIONS).flatMap(
  ([id, { recipe }]): [string, LadderRecipe][] => (recipe.kind === "ladder" ? [[id, recipe]] : []),
);

describe("ladder presets: exact commands", () => {
  it("hls_abr_264_basic: one process, split, aligned GOPs, per-variant rates, muxed audio, master", () => {
    expect(argsOf("hls_abr_264_basic")).toEqual([
      ...HEAD,
      "-filter_complex",
      "[0:0]scale=-2:720,format=yuv420p,split=2[v0][c0];[c0]scale=-2:480,split=2[v1][c1];[c1]scale=-2:360[v2]",
      "-map",
      "[v0]",
      "-map",
      "0:1",
      "-map",
      "[v1]",
      "-map",
      "0:1",
      "-map",
      "[v2]",
      "-map",
      "0:1",
      "-c:v",
      "libx264",
      "-preset",
      "veryfast",
      "-g",
      "60",
      "-keyint_min",
      "60",
      "-sc_threshold",
      "0",
      "-b:v:0",
      "2800k",
      "-maxrate:v:0",
      "2996k",
      "-bufsize:v:0",
      "4200k",
      "-b:v:1",
      "1400k",
      "-maxrate:v:1",
      "1498k",
      "-bufsize:v:1",
      "2100k",
      "-b:v:2",
      "800k",
      "-maxrate:v:2",
      "856k",
      "-bufsize:v:2",
      "1200k",
      "-c:a",
      "aac",
      "-ar",
      "48000",
      "-ac",
      "2",
      "-b:a:0",
      "128k",
      "-b:a:1",
      "96k",
      "-b:a:2",
      "96k",
      "-f",
      "hls",
      "-hls_time",
      "6",
      "-hls_playlist_type",
      "vod",
      "-hls_segment_type",
      "mpegts",
      "-hls_flags",
      "independent_segments",
      "-hls_segment_filename",
      `${OUT}/%v/seg_%05d.ts`,
      "-master_pl_name",
      "master.m3u8",
      "-var_stream_map",
      "v:0,a:0,name:720p v:1,a:1,name:480p v:2,a:2,name:360p",
      `${OUT}/%v/index.m3u8`,
    ]);
  });

  it("dash_abr_264_standard: video and audio adaptation sets, one audio representation", () => {
    expect(argsOf("dash_abr_264_standard")).toEqual([
      ...HEAD,
      "-filter_complex",
      "[0:0]scale=-2:1080,format=yuv420p,split=2[v0][c0];[c0]scale=-2:720,split=2[v1][c1];[c1]scale=-2:480,split=2[v2][c2];[c2]scale=-2:360[v3]",
      "-map",
      "[v0]",
      "-map",
      "[v1]",
      "-map",
      "[v2]",
      "-map",
      "[v3]",
      "-map",
      "0:1",
      "-c:v",
      "libx264",
      "-preset",
      "veryfast",
      "-g",
      "60",
      "-keyint_min",
      "60",
      "-sc_threshold",
      "0",
      "-b:v:0",
      "5000k",
      "-maxrate:v:0",
      "5350k",
      "-bufsize:v:0",
      "7500k",
      "-b:v:1",
      "2800k",
      "-maxrate:v:1",
      "2996k",
      "-bufsize:v:1",
      "4200k",
      "-b:v:2",
      "1400k",
      "-maxrate:v:2",
      "1498k",
      "-bufsize:v:2",
      "2100k",
      "-b:v:3",
      "800k",
      "-maxrate:v:3",
      "856k",
      "-bufsize:v:3",
      "1200k",
      "-c:a",
      "aac",
      "-ar",
      "48000",
      "-ac",
      "2",
      "-b:a",
      "128k",
      "-f",
      "dash",
      "-seg_duration",
      "4",
      "-use_template",
      "1",
      "-use_timeline",
      "1",
      "-adaptation_sets",
      "id=0,streams=v id=1,streams=a",
      "-init_seg_name",
      "init-$RepresentationID$.m4s",
      "-media_seg_name",
      "chunk-$RepresentationID$-$Number%05d$.m4s",
      `${OUT}/manifest.mpd`,
    ]);
  });

  it("cmaf_abr_265_standard: HEVC hvc1, closed GOPs, one fMP4 set with DASH and HLS manifests", () => {
    const args = argsOf("cmaf_abr_265_standard");
    expect(args.slice(args.indexOf("-c:v"), args.indexOf("-b:v:0"))).toEqual([
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
    ]);
    expect(flagValue(args, "-f")).toBe("dash");
    expect(flagValue(args, "-hls_playlist")).toBe("1");
    expect(flagValue(args, "-hls_master_name")).toBe("master.m3u8");
    expect(args.at(-1)).toBe(`${OUT}/manifest.mpd`);
  });

  it("hls_abr_265_efficient_4k: HEVC in fMP4 segments, rungs from 2160p", () => {
    const args = argsOf("hls_abr_265_efficient_4k", {
      ...PROBE_1080,
      video: { ...PROBE_1080.video!, width: 3840, height: 2160 },
    });
    expect(flagValue(args, "-filter_complex")!.match(/scale=/g)).toHaveLength(5);
    expect(flagValue(args, "-var_stream_map")).toBe(
      "v:0,a:0,name:2160p v:1,a:1,name:1440p v:2,a:2,name:1080p v:3,a:3,name:720p v:4,a:4,name:480p",
    );
    expect(flagValue(args, "-hls_segment_type")).toBe("fmp4");
    expect(flagValue(args, "-hls_segment_filename")).toBe(`${OUT}/%v/seg_%05d.m4s`);
    expect(flagValue(args, "-tag:v")).toBe("hvc1");
  });

  it("hls_abr_av1_efficient: SVT-AV1 preset 10 with the GOP, fMP4", () => {
    const args = argsOf("hls_abr_av1_efficient");
    expect(args.slice(args.indexOf("-c:v"), args.indexOf("-b:v:0"))).toEqual([
      "-c:v",
      "libsvtav1",
      "-preset",
      "10",
      "-g",
      "60",
    ]);
    expect(flagValue(args, "-hls_segment_type")).toBe("fmp4");
  });

  it("live_hls_264_lowlatency: short segments, 1 s GOP, event playlist keeping every segment", () => {
    const args = argsOf("live_hls_264_lowlatency");
    expect(flagValue(args, "-g")).toBe("30");
    expect(flagValue(args, "-hls_time")).toBe("2");
    expect(flagValue(args, "-hls_playlist_type")).toBe("event");
    expect(flagValue(args, "-hls_list_size")).toBe("0");
    expect(flagValue(args, "-hls_flags")).toBe("independent_segments+program_date_time");
    expect(flagValue(args, "-bufsize:v:0")).toBe("2800k");
  });

  it("live_dash_264_lowlatency: ldash, streaming, 1 s segments in 0.2 s chunks, no timeline", () => {
    const args = argsOf("live_dash_264_lowlatency");
    const dash = args.slice(args.indexOf("-f"));
    expect(dash).toEqual([
      "-f",
      "dash",
      "-seg_duration",
      "1",
      "-use_template",
      "1",
      "-use_timeline",
      "0",
      "-ldash",
      "1",
      "-streaming",
      "1",
      "-frag_type",
      "duration",
      "-frag_duration",
      "0.2",
      "-adaptation_sets",
      "id=0,streams=v id=1,streams=a",
      "-init_seg_name",
      "init-$RepresentationID$.m4s",
      "-media_seg_name",
      "chunk-$RepresentationID$-$Number%05d$.m4s",
      `${OUT}/manifest.mpd`,
    ]);
  });

  it.each(LADDERS)("%s: key flags", (id, recipe) => {
    const args = argsOf(id);
    expect(args.slice(0, 7)).toEqual([
      "-hide_banner",
      "-nostdin",
      "-y",
      "-protocol_whitelist",
      "file",
      "-max_pixels",
      MAX_PICTURE,
    ]);
    expect(args.filter((a) => a === "-i")).toHaveLength(1);
    expect(flagValue(args, "-filter_complex")).toContain("split=2");
    expect(flagValue(args, "-progress")).toBe("pipe:1");
    expect(flagValue(args, "-g")).toBe(String(recipe.gopSeconds * 30));
    expect(flagValue(args, "-maxrate:v:0")).toBe(`${selectRungs(recipe.rungs, 1080)[0].maxrate}k`);
  });
});

describe("ladder rungs", () => {
  it("drops the rungs above a 480p source, in one process still", () => {
    const args = argsOf("hls_abr_264_standard", PROBE_480);
    expect(flagValue(args, "-filter_complex")).toBe(
      "[0:0]scale=-2:480,format=yuv420p,split=2[v0][c0];[c0]scale=-2:360[v1]",
    );
    expect(flagValue(args, "-var_stream_map")).toBe("v:0,a:0,name:480p v:1,a:1,name:360p");
    expect(flagValue(args, "-g")).toBe("50");
    expect(args).not.toContain("-b:v:2");
  });

  it("keeps the 480p rung of the 4K ladder for a 480p source", () => {
    const args = argsOf("hls_abr_265_efficient_4k", PROBE_480);
    expect(flagValue(args, "-var_stream_map")).toBe("v:0,a:0,name:480p");
  });

  it("keeps the lowest rung, scaled down to the source, when every rung is above it", () => {
    const rungs = PRESET_DEFINITIONS.hls_abr_264_basic.recipe.rungs;
    expect(selectRungs(rungs, 241)).toEqual([{ ...rungs[2], height: 240 }]);
    const args = argsOf("hls_abr_264_basic", {
      ...PROBE_1080,
      video: { ...PROBE_1080.video!, width: 320, height: 180 },
    });
    expect(flagValue(args, "-filter_complex")).toBe("[0:0]scale=-2:180,format=yuv420p[v0]");
    expect(flagValue(args, "-var_stream_map")).toBe("v:0,a:0,name:180p");
  });

  it("every rung's maxrate is within 1.1 × its bitrate, so the HLS BANDWIDTH (1.1 × bitrate) covers the peak", () => {
    for (const [, recipe] of LADDERS) {
      for (const r of recipe.rungs) expect(r.maxrate).toBeLessThanOrEqual(r.videoBitrate * 1.1);
      expect(recipe.packaging.segmentSeconds % recipe.gopSeconds).toBe(0);
      expect(recipe.rungs.map((r) => r.height)).toEqual([...recipe.rungs.map((r) => r.height)].sort((a, b) => b - a));
    }
  });

  it("a source without audio: no audio maps in HLS or DASH", () => {
    const hls = argsOf("hls_abr_264_basic", PROBE_NO_AUDIO);
    expect(flagValue(hls, "-var_stream_map")).toBe("v:0,name:720p v:1,name:480p v:2,name:360p");
    expect(hls).not.toContain("-c:a");
    const dash = argsOf("dash_abr_264_standard", PROBE_NO_AUDIO);
    expect(flagValue(dash, "-adaptation_sets")).toBe("id=0,streams=v");
    expect(dash).not.toContain("0:1");
  });
});
