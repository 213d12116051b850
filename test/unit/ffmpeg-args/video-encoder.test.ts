import { describe, expect, it } from "vitest";
import { validateEdl } from "../../../domain/edl/validate";
import { buildPresetCommands } from "../../../encoder/ffmpeg/args";
import { CONTENT_TYPES, MUXERS } from "../../../encoder/ffmpeg/args/containers";
import { videoEncoderArgs } from "../../../encoder/ffmpeg/args/video-encoder";
import { encodeArgs } from "../../../encoder/timeline/output-args";
import { IN, OUT, PROBE_1080 } from "./fixtures";

const X264 = { codec: "libx264", preset: "veryfast" } as const;
const X265 = { codec: "libx265", preset: "veryfast" } as const;
const VP9 = { codec: "libvpx-vp9", deadline: "good", cpuUsed: 5 } as const;

/** The EDL output settings the validator makes of `output`. */
function outputOf(output: Record<string, unknown>) {
  const result = validateEdl(
    {
      version: "1.0",
      output,
      timeline: {
        tracks: [{ type: "video", clips: [{ id: "a", src: "https://m.example/a.mp4", in: 0, out: 1, startTime: 0 }] }],
      },
    },
    "enterprise",
  );
  expect(result.errors).toEqual([]);
  return result.edl!.output;
}

/** From `-c:v` up to (not including) the first audio option. */
function videoPart(args: string[]): string[] {
  return args.slice(
    args.indexOf("-c:v"),
    args.findIndex((a, i) => i > args.indexOf("-c:v") && (a === "-pix_fmt" || a === "-c:a")),
  );
}

describe("videoEncoderArgs: one builder for every video encoder setting", () => {
  it("x264: CRF capped through the VBV", () => {
    expect(
      videoEncoderArgs({
        encoder: X264,
        rate: { crf: 23, cap: { maxrate: "3000k", bufsize: "6000k" } },
        isoBmff: true,
      }),
    ).toEqual(["-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-maxrate", "3000k", "-bufsize", "6000k"]);
  });

  it("x265: quiet log, tagged hvc1 in ISO BMFF only", () => {
    expect(videoEncoderArgs({ encoder: X265, rate: { crf: 26 }, isoBmff: true })).toEqual([
      "-c:v",
      "libx265",
      "-preset",
      "veryfast",
      "-x265-params",
      "log-level=error",
      "-tag:v",
      "hvc1",
      "-crf",
      "26",
    ]);
    expect(videoEncoderArgs({ encoder: { ...X265, preset: "slow" }, rate: { crf: 26 }, isoBmff: false })).toEqual([
      "-c:v",
      "libx265",
      "-preset",
      "slow",
      "-x265-params",
      "log-level=error",
      "-crf",
      "26",
    ]);
  });

  it("VP9: row-mt; CRF alone is constant quality (-b:v 0), a cap makes it constrained quality, a bitrate alone is a target", () => {
    const vp9 = ["-c:v", "libvpx-vp9", "-deadline", "good", "-cpu-used", "5", "-row-mt", "1"];
    expect(videoEncoderArgs({ encoder: VP9, rate: { crf: 33 }, isoBmff: false })).toEqual([
      ...vp9,
      "-crf",
      "33",
      "-b:v",
      "0",
    ]);
    expect(
      videoEncoderArgs({
        encoder: VP9,
        rate: { crf: 31, cap: { maxrate: "4000k", bufsize: "8000k" } },
        isoBmff: false,
      }),
    ).toEqual([...vp9, "-crf", "31", "-b:v", "4000k"]);
    expect(videoEncoderArgs({ encoder: VP9, rate: { bitrate: "2000k" }, isoBmff: false })).toEqual([
      ...vp9,
      "-b:v",
      "2000k",
    ]);
  });

  it("ladders: fixed keyframe intervals and no rate (set per rung)", () => {
    expect(videoEncoderArgs({ encoder: X264, gopFrames: 60, isoBmff: false })).toEqual([
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
    ]);
    expect(videoEncoderArgs({ encoder: X265, gopFrames: 48, isoBmff: true })).toEqual([
      "-c:v",
      "libx265",
      "-preset",
      "veryfast",
      "-g",
      "48",
      "-keyint_min",
      "48",
      "-x265-params",
      "log-level=error:scenecut=0:open-gop=0",
      "-tag:v",
      "hvc1",
    ]);
    expect(videoEncoderArgs({ encoder: { codec: "libsvtav1", preset: 10 }, gopFrames: 60, isoBmff: true })).toEqual([
      "-c:v",
      "libsvtav1",
      "-preset",
      "10",
      "-g",
      "60",
    ]);
  });
});

describe("a timeline's output through the same builders as the presets", () => {
  it("asking a timeline for what webm_vp9_1080p does gives the preset's very video encoder arguments", () => {
    const preset = buildPresetCommands("webm_vp9_1080p", { input: IN, outDir: OUT, probe: PROBE_1080 }).steps[0];
    if (preset.kind !== "run") throw new Error("expected one run");
    const timeline = encodeArgs(outputOf({ container: "webm", crf: 31, videoBitrate: "4000k" }));
    expect(videoPart(timeline)).toEqual(videoPart(preset.command.args));
    expect(videoPart(timeline)).toEqual([
      "-c:v",
      "libvpx-vp9",
      "-deadline",
      "good",
      "-cpu-used",
      "5",
      "-row-mt",
      "1",
      "-crf",
      "31",
      "-b:v",
      "4000k",
    ]);
  });

  it("mp4 and mov: HEVC tagged hvc1, stereo 48 kHz audio, faststart, the container's muxer", () => {
    for (const container of ["mp4", "mov"] as const) {
      expect(encodeArgs(outputOf({ container, videoCodec: "libx265", crf: 28, preset: "fast" }))).toEqual([
        "-c:v",
        "libx265",
        "-preset",
        "fast",
        "-x265-params",
        "log-level=error",
        "-tag:v",
        "hvc1",
        "-crf",
        "28",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "aac",
        "-ar",
        "48000",
        "-ac",
        "2",
        "-b:a",
        "128k",
        "-movflags",
        "+faststart",
        "-f",
        container,
      ]);
    }
  });

  it("mkv: no hvc1 tag and no faststart (not ISO BMFF); a bitrate alone; MP3 by its encoder's name", () => {
    expect(
      encodeArgs(
        outputOf({
          container: "mkv",
          videoCodec: "libx265",
          videoBitrate: "2500k",
          audioCodec: "mp3",
          audioBitrate: "192k",
        }),
      ),
    ).toEqual([
      "-c:v",
      "libx265",
      "-preset",
      "veryfast",
      "-x265-params",
      "log-level=error",
      "-b:v",
      "2500k",
      "-pix_fmt",
      "yuv420p",
      "-c:a",
      "libmp3lame",
      "-ar",
      "48000",
      "-ac",
      "2",
      "-b:a",
      "192k",
      "-f",
      "matroska",
    ]);
  });

  it("x264 with a CRF and a bitrate: the bitrate caps the CRF, as maxrate and bufsize", () => {
    expect(videoPart(encodeArgs(outputOf({ crf: 20, videoBitrate: "5000k", preset: "ultrafast" })))).toEqual([
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-crf",
      "20",
      "-maxrate",
      "5000k",
      "-bufsize",
      "5000k",
    ]);
  });

  it("VP9 speeds: each x264 speed name maps to a deadline and cpu-used pair", () => {
    const speed = (preset: string) => {
      const args = encodeArgs(outputOf({ container: "webm", preset }));
      return [args[args.indexOf("-deadline") + 1], args[args.indexOf("-cpu-used") + 1]];
    };
    expect(speed("superfast")).toEqual(["realtime", "8"]);
    expect(speed("faster")).toEqual(["good", "5"]);
    expect(speed("medium")).toEqual(["good", "3"]);
    expect(speed("veryslow")).toEqual(["good", "1"]);
  });

  it("every timeline container has a muxer and a content type", () => {
    for (const container of Object.keys(MUXERS) as (keyof typeof MUXERS)[])
      expect(CONTENT_TYPES[container]).toMatch(/^video\//);
  });
});
