import { describe, expect, it } from "vitest";
import { buildPresetCommands, type PlanStep } from "../../../encoder/ffmpeg/args";
import { parseLoudnormMeasurement } from "../../../encoder/ffmpeg/args/loudness";
import { HEAD, IN, OUT, PROBE_1080, PROBE_NO_AUDIO, flagValue } from "./fixtures";

const HEAD_INFO = HEAD.map((a) => (a === "warning" ? "info" : a));
const build = (id: string, probe = PROBE_1080) => buildPresetCommands(id, { input: IN, outDir: OUT, probe });
const twoPass = (step: PlanStep) => {
  if (step.kind !== "two-pass") throw new Error("expected a two-pass step");
  return step;
};

/** What loudnorm prints after a measuring pass (stderr tail as the runner keeps it). */
const MEASURE_STDERR = `[Parsed_loudnorm_1] 
{
	"input_i" : "-27.61",
	"input_tp" : "-4.47",
	"input_lra" : "18.06",
	"input_thresh" : "-39.20",
	"output_i" : "-16.58",
	"output_tp" : "-1.50",
	"output_lra" : "14.78",
	"output_thresh" : "-27.71",
	"normalization_type" : "dynamic",
	"target_offset" : "0.58"
}
size=N/A time=00:00:10.00 bitrate=N/A speed= 312x`;

describe("audio_aac_podcast: two-pass loudnorm to −16 LUFS", () => {
  const plan = build("audio_aac_podcast");
  const step = twoPass(plan.steps[0]);

  it("measures first, at info level (where loudnorm reports), into the null muxer", () => {
    expect(plan.steps).toHaveLength(1);
    expect(step.measure.args).toEqual([
      ...HEAD_INFO,
      "-map",
      "0:1",
      "-af",
      "aformat=channel_layouts=stereo,loudnorm=I=-16:TP=-1.5:LRA=11:print_format=json",
      "-f",
      "null",
      "-",
    ]);
  });

  it("parses the measurement", () => {
    expect(parseLoudnormMeasurement(MEASURE_STDERR)).toEqual({
      inputI: -27.61,
      inputTp: -4.47,
      inputLra: 18.06,
      inputThresh: -39.2,
      targetOffset: 0.58,
    });
  });

  it("applies it linearly with the LRA target raised above the measured range, at 48 kHz", () => {
    expect(step.apply(parseLoudnormMeasurement(MEASURE_STDERR)).args).toEqual([
      ...HEAD,
      "-map",
      "0:1",
      "-af",
      "aformat=channel_layouts=stereo,loudnorm=I=-16:TP=-1.5:LRA=20:measured_I=-27.61:measured_TP=-4.47:measured_LRA=18.06:measured_thresh=-39.2:offset=0.58:linear=true",
      "-ar",
      "48000",
      "-c:a",
      "aac",
      "-b:a",
      "128k",
      "-movflags",
      "+faststart",
      `${OUT}/output.m4a`,
    ]);
    expect(plan.output).toEqual({ kind: "file", file: "output.m4a", contentType: "audio/mp4" });
  });

  it("keeps the recipe's LRA when the measured range is narrower", () => {
    const m = { inputI: -20, inputTp: -6, inputLra: 3.2, inputThresh: -30, targetOffset: 0 };
    expect(flagValue(step.apply(m).args, "-af")).toContain(":LRA=11:");
  });

  it("mono stays mono, at the mono bitrate", () => {
    const mono = twoPass(
      build("audio_aac_podcast", { ...PROBE_1080, audio: [{ ...PROBE_1080.audio[0], channels: 1 }] }).steps[0],
    );
    expect(flagValue(mono.measure.args, "-af")).toMatch(/^aformat=channel_layouts=mono,/);
    const args = mono.apply(parseLoudnormMeasurement(MEASURE_STDERR)).args;
    expect(flagValue(args, "-b:a")).toBe("64k");
  });

  it("a silent source fails clearly instead of producing garbage", () => {
    expect(() => parseLoudnormMeasurement(MEASURE_STDERR.replace('"-27.61"', '"-inf"'))).toThrowError(/silent/);
  });

  it("a source without audio fails with a clear, non-retryable message", () => {
    expect(() => build("audio_aac_podcast", PROBE_NO_AUDIO)).toThrowError(
      expect.objectContaining({
        message: "The source has no audio stream; preset audio_aac_podcast needs one.",
        retryable: false,
      }),
    );
    expect(() => build("audio_mp3_hq", PROBE_NO_AUDIO)).toThrowError(/no audio stream/);
    expect(() => build("filter_loudnorm_ebu_r128", PROBE_NO_AUDIO)).toThrowError(/no audio stream/);
  });
});

describe("audio_mp3_hq", () => {
  it("LAME V0, at most stereo, ID3v2.3", () => {
    const plan = build("audio_mp3_hq");
    const step = plan.steps[0];
    expect(step.kind === "run" && step.command.args).toEqual([
      ...HEAD,
      "-map",
      "0:1",
      "-c:a",
      "libmp3lame",
      "-q:a",
      "0",
      "-ac",
      "2",
      "-id3v2_version",
      "3",
      `${OUT}/output.mp3`,
    ]);
    expect(plan.output).toEqual({ kind: "file", file: "output.mp3", contentType: "audio/mpeg" });
  });
});

describe("audio filter presets: video copied", () => {
  it("filter_loudnorm_ebu_r128: −23 LUFS two-pass, video stream copied", () => {
    const step = twoPass(build("filter_loudnorm_ebu_r128").steps[0]);
    expect(flagValue(step.measure.args, "-af")).toBe(
      "aformat=channel_layouts=stereo,loudnorm=I=-23:TP=-1:LRA=20:print_format=json",
    );
    expect(step.measure.args).not.toContain("0:0");
    expect(step.apply(parseLoudnormMeasurement(MEASURE_STDERR)).args).toEqual([
      ...HEAD,
      "-map",
      "0:0",
      "-c:v",
      "copy",
      "-map",
      "0:1",
      "-af",
      "aformat=channel_layouts=stereo,loudnorm=I=-23:TP=-1:LRA=20:measured_I=-27.61:measured_TP=-4.47:measured_LRA=18.06:measured_thresh=-39.2:offset=0.58:linear=true",
      "-ar",
      "48000",
      "-c:a",
      "aac",
      "-b:a",
      "192k",
      "-movflags",
      "+faststart",
      `${OUT}/output.mp4`,
    ]);
  });

  it("filter_audio_denoise: afftdn, one pass; an HEVC source keeps its hvc1 tag", () => {
    const plan = build("filter_audio_denoise", { ...PROBE_1080, video: { ...PROBE_1080.video!, codec: "hevc" } });
    const step = plan.steps[0];
    expect(step.kind === "run" && step.command.args).toEqual([
      ...HEAD,
      "-map",
      "0:0",
      "-c:v",
      "copy",
      "-tag:v",
      "hvc1",
      "-map",
      "0:1",
      "-af",
      "aformat=channel_layouts=stereo,afftdn=nr=12:nf=-40:tn=1",
      "-ar",
      "48000",
      "-c:a",
      "aac",
      "-b:a",
      "192k",
      "-movflags",
      "+faststart",
      `${OUT}/output.mp4`,
    ]);
  });
});
