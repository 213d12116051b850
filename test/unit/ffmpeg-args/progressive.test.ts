import { describe, expect, it } from "vitest";
import { buildPresetCommands, type PresetCommands } from "../../../encoder/ffmpeg/args";
import { HEAD, IN, OUT, PROBE_1080, PROBE_NO_AUDIO, flagValue } from "./fixtures";

const argsOf = (plan: PresetCommands) => {
  const step = plan.steps[0];
  if (step.kind !== "run") throw new Error(`expected one run step, got ${step.kind}`);
  return step.command.args;
};
const build = (id: string, probe = PROBE_1080) => buildPresetCommands(id, { input: IN, outDir: OUT, probe });

describe("progressive presets: exact commands", () => {
  it("mp4_264_720p", () => {
    const plan = build("mp4_264_720p");
    expect(plan.steps).toHaveLength(1);
    expect(argsOf(plan)).toEqual([
      ...HEAD,
      "-map",
      "0:0",
      "-map",
      "0:1",
      "-vf",
      "scale=1280:720,setsar=1,format=yuv420p",
      "-c:v",
      "libx264",
      "-preset",
      "veryfast",
      "-crf",
      "23",
      "-maxrate",
      "3000k",
      "-bufsize",
      "6000k",
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
      `${OUT}/output.mp4`,
    ]);
    expect(plan.output).toEqual({ kind: "file", file: "output.mp4", contentType: "video/mp4" });
  });

  it("mp4_265_1080p_efficient: HEVC tagged hvc1, CRF only", () => {
    expect(argsOf(build("mp4_265_1080p_efficient"))).toEqual([
      ...HEAD,
      "-map",
      "0:0",
      "-map",
      "0:1",
      "-vf",
      "scale=1920:1080,setsar=1,format=yuv420p",
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
      `${OUT}/output.mp4`,
    ]);
  });

  it("webm_vp9_1080p: VP9 good/cpu-used 5/row-mt, constrained quality, Opus, no faststart", () => {
    const plan = build("webm_vp9_1080p");
    expect(argsOf(plan)).toEqual([
      ...HEAD,
      "-map",
      "0:0",
      "-map",
      "0:1",
      "-vf",
      "scale=1920:1080,setsar=1,format=yuv420p",
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
      "-c:a",
      "libopus",
      "-ar",
      "48000",
      "-ac",
      "2",
      "-b:a",
      "128k",
      `${OUT}/output.webm`,
    ]);
    expect(plan.output).toEqual({ kind: "file", file: "output.webm", contentType: "video/webm" });
  });

  it("social_264_vertical_1080x1920: fills 9:16 by cropping the centre", () => {
    const args = argsOf(build("social_264_vertical_1080x1920"));
    expect(flagValue(args, "-vf")).toBe(
      "scale=1080:1920:force_original_aspect_ratio=increase,crop=1080:1920,setsar=1,format=yuv420p",
    );
    expect(flagValue(args, "-maxrate")).toBe("6000k");
    expect(flagValue(args, "-bufsize")).toBe("12000k");
  });

  it.each([
    ["mp4_264_240p", "426:240", "26", "400k", "64k"],
    ["mp4_264_480p", "854:480", "24", "1400k", "96k"],
    ["mp4_264_1080p", "1920:1080", "22", "6000k", "128k"],
    ["social_264_square_1080", "1080:1080", "22", "5000k", "128k"],
  ])("%s: catalogue resolution, CRF and maxrate", (id, size, crf, maxrate, audio) => {
    const args = argsOf(build(id));
    expect(args.slice(0, HEAD.length)).toEqual(HEAD);
    expect(flagValue(args, "-vf")).toContain(`scale=${size}`);
    expect(flagValue(args, "-crf")).toBe(crf);
    expect(flagValue(args, "-maxrate")).toBe(maxrate);
    expect(flagValue(args, "-b:a")).toBe(audio);
    expect(flagValue(args, "-movflags")).toBe("+faststart");
  });

  it("contain: fits other aspects inside the box with even sizes, from the display aspect", () => {
    const sized = (video: Partial<NonNullable<typeof PROBE_1080.video>>) =>
      flagValue(argsOf(build("mp4_264_480p", { ...PROBE_1080, video: { ...PROBE_1080.video!, ...video } })), "-vf");
    expect(sized({ width: 1280, height: 720 })).toBe("scale=854:480,setsar=1,format=yuv420p");
    expect(sized({ width: 1080, height: 1920 })).toBe("scale=270:480,setsar=1,format=yuv420p");
    expect(sized({ width: 640, height: 480 })).toBe("scale=640:480,setsar=1,format=yuv420p");
    expect(sized({ width: 2048, height: 858 })).toBe("scale=854:358,setsar=1,format=yuv420p");
    // Anamorphic DVD: 720x480 stored, 16:9 shown.
    expect(sized({ width: 720, height: 480, sampleAspect: 32 / 27 })).toBe("scale=854:480,setsar=1,format=yuv420p");
  });

  it("a source without audio maps no audio and sets no audio encoder", () => {
    const args = argsOf(build("mp4_264_720p", PROBE_NO_AUDIO));
    expect(args.filter((a) => a === "-map")).toHaveLength(1);
    expect(args).not.toContain("-c:a");
  });

  it("a source without video fails clearly and is not retried", () => {
    expect(() => build("mp4_264_720p", { ...PROBE_1080, video: null })).toThrowError(
      expect.objectContaining({
        message: "The source has no video stream; preset mp4_264_720p needs one.",
        retryable: false,
      }),
    );
  });
});
