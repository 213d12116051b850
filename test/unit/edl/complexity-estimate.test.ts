import { describe, expect, it } from "vitest";
import { complexityLevel, complexityScore } from "../../../domain/edl/complexity";
import { estimateSeconds, formatRange } from "../../../domain/edl/estimate";
import type { OutputSettings } from "../../../domain/edl/validated-edl";
import { canProcess, postStats, validateEdl } from "../../../domain/edl/validate";
import { edl, overlayClip, textClip, track, videoClip, videoEdl } from "./fixtures";

const none = { videoClips: 1, overlays: 0, texts: 0, speedChanges: 0, blends: 0, duration: 10 };
const complexityOf = (document: unknown) => validateEdl(document, "enterprise").stats.complexity;
const sequence = (count: number, fields: Record<string, unknown> = {}) =>
  Array.from({ length: count }, (_, i) => videoClip({ startTime: i * 10, ...fields }));

describe("contract §3.15 EDL stats object › complexity (decision: a scored rule, simple/moderate/complex/heavy)", () => {
  it("score: cuts 1, overlays 2, text 1, speed changes 2, blends 3, one per full 10 minutes", () => {
    expect(complexityScore(none)).toBe(0);
    expect(complexityScore({ ...none, videoClips: 3 })).toBe(2);
    expect(complexityScore({ ...none, overlays: 1 })).toBe(2);
    expect(complexityScore({ ...none, texts: 1 })).toBe(1);
    expect(complexityScore({ ...none, speedChanges: 1 })).toBe(2);
    expect(complexityScore({ ...none, blends: 1 })).toBe(3);
    expect(complexityScore({ ...none, duration: 599 })).toBe(0);
    expect(complexityScore({ ...none, duration: 1200 })).toBe(2);
    expect(complexityScore({ ...none, videoClips: 0 })).toBe(0);
  });

  it.each([
    [0, "simple"],
    [3, "simple"],
    [4, "moderate"],
    [11, "moderate"],
    [12, "complex"],
    [29, "complex"],
    [30, "heavy"],
    [500, "heavy"],
  ] as const)("score %i is %s", (score, level) => {
    expect(complexityLevel(score)).toBe(level);
  });

  it("one clip is simple; with a caption and a logo it is still simple", () => {
    expect(complexityOf(videoEdl(videoClip()))).toBe("simple");
    const captioned = edl([
      track("video", [videoClip()]),
      track("overlay", [overlayClip()]),
      track("text", [textClip()]),
    ]);
    expect(complexityOf(captioned)).toBe("simple");
  });

  it("five cuts are moderate", () => {
    expect(complexityOf(edl([track("video", sequence(5))]))).toBe("moderate");
  });

  it("the measured timeline (3 clips, blended overlay, text) is moderate", () => {
    const document = edl([
      track("video", sequence(3)),
      track("overlay", [overlayClip({ blendMode: "multiply" })]),
      track("text", [textClip()]),
    ]);
    expect(complexityOf(document)).toBe("moderate");
  });

  it("four blended overlays make it complex", () => {
    const blended = Array.from({ length: 4 }, (_, i) => overlayClip({ blendMode: "screen", startTime: i * 5 }));
    expect(complexityOf(edl([track("video", [videoClip()]), track("overlay", blended)]))).toBe("complex");
  });

  it("twenty speed-changed clips are heavy", () => {
    expect(complexityOf(edl([track("video", sequence(20, { speed: 2 }))]))).toBe("heavy");
  });

  it("a two-hour single clip is complex by length alone", () => {
    expect(complexityOf(videoEdl(videoClip({ out: 7200 })))).toBe("complex");
  });
});

describe("contract §5.6 and §5.7 POST and PUT /edl › estimate (decision: measured realtime factors)", () => {
  const output: OutputSettings = {
    resolution: { width: 1920, height: 1080 },
    fps: 30,
    container: "mp4",
    videoCodec: "libx264",
    audioCodec: "aac",
    audioBitrate: "128k",
    preset: "veryfast",
    crf: 23,
  };
  const base = { output, duration: 600, assets: 1, complexity: "simple" as const };

  it("1080p30 x264 veryfast renders at 2.3× realtime, plus 10 s and 2 s per asset", () => {
    expect(estimateSeconds(base)).toBeCloseTo(12 + 600 / 2.3, 6);
  });

  it("x265 at 0.79× and VP9 at 0.45× realtime", () => {
    expect(estimateSeconds({ ...base, output: { ...output, videoCodec: "libx265" } })).toBeCloseTo(12 + 600 / 0.79, 6);
    expect(estimateSeconds({ ...base, output: { ...output, videoCodec: "libvpx-vp9" } })).toBeCloseTo(
      12 + 600 / 0.45,
      6,
    );
  });

  it("scales with pixels per second: 0.4 + 0.6 × the ratio to 1080p30", () => {
    const uhd60 = { ...output, resolution: { width: 3840, height: 2160 }, fps: 60 };
    expect(estimateSeconds({ ...base, output: uhd60 })).toBeCloseTo(12 + (600 * (0.4 + 0.6 * 8)) / 2.3, 6);
    const p720 = { ...output, resolution: { width: 1280, height: 720 } };
    expect(estimateSeconds({ ...base, output: p720 })).toBeLessThan(estimateSeconds(base));
  });

  it("slower presets and higher complexity take longer, step by step", () => {
    const presets = [
      "ultrafast",
      "superfast",
      "veryfast",
      "faster",
      "fast",
      "medium",
      "slow",
      "slower",
      "veryslow",
    ] as const;
    const byPreset = presets.map((preset) => estimateSeconds({ ...base, output: { ...output, preset } }));
    expect(byPreset).toEqual([...byPreset].sort((a, b) => a - b));
    const levels = ["simple", "moderate", "complex", "heavy"] as const;
    const byLevel = levels.map((complexity) => estimateSeconds({ ...base, complexity }));
    expect(byLevel).toEqual([...byLevel].sort((a, b) => a - b));
  });

  it.each([
    [30, "under 1 minute"],
    [42.8, "under 1 minute"],
    [43, "1-2 minutes"],
    [272.87, "3-7 minutes"],
    [5000, "66-117 minutes"],
    [6000, "1-3 hours"],
    [40000, "8-16 hours"],
  ])("%s seconds reads %s (0.8× to 1.4×, whole minutes or hours)", (seconds, text) => {
    expect(formatRange(seconds)).toBe(text);
  });

  it.each([
    [{}, 10, "under 1 minute"],
    [{}, 600, "3-7 minutes"],
    [{ videoCodec: "libx265" }, 600, "10-19 minutes"],
    [{ container: "webm" }, 600, "17-32 minutes"],
    [{ resolution: "1280x720" }, 600, "2-5 minutes"],
  ])("validateEdl: output %j, %s s of timeline, estimate %s", (settings, seconds, text) => {
    const document = { ...videoEdl(videoClip({ in: 0, out: seconds })), output: settings };
    expect(validateEdl(document, "enterprise").estimate).toEqual({ processingTime: text, complexity: "simple" });
  });

  it("estimate.complexity is stats.complexity, and an invalid timeline still gets an estimate", () => {
    const result = validateEdl(edl([track("video", sequence(6, { speed: 0 }))]), "free");
    expect(result.valid).toBe(false);
    expect(result.estimate.complexity).toBe(result.stats.complexity);
    expect(result.estimate.processingTime).toBe("1-2 minutes");
  });
});

describe("contract §5.7 PUT /edl › plan.canProcess, and §5.6 POST /edl › stats", () => {
  it("canProcess is true exactly for a timeline valid under the plan", () => {
    const six = edl([track("video", sequence(6))]);
    expect(canProcess(validateEdl(six, "free"))).toBe(false);
    expect(canProcess(validateEdl(six, "pro"))).toBe(true);
    expect(canProcess(validateEdl(videoEdl(videoClip({ speed: 0 })), "enterprise"))).toBe(false);
  });

  it("POST stats are clips, duration, tracks and complexity", () => {
    const { stats } = validateEdl(
      edl([track("video", sequence(2, { transform: 1 })), track("text", [textClip()])]),
      "free",
    );
    expect(stats).toEqual({
      clips: 3,
      duration: 20,
      tracks: 2,
      assets: 1,
      complexity: "simple",
      features: ["transform"],
    });
    expect(postStats(stats)).toEqual({ clips: 3, duration: 20, tracks: 2, complexity: "simple" });
  });
});
