import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FrameRate } from "../../../domain/split";
import type { ProbeSummary } from "../../../encoder/ffmpeg/probe";
import { framesOf, isConstantRate, type SplitFacts } from "../../../encoder/split/facts";
import { audioTaskCommand, joinCommand } from "../../../encoder/ffmpeg/args/split";
import { gopFramesOf, planSplit, splittableRecipe, type SplittableRecipe } from "../../../encoder/split/plan";

const NTSC: FrameRate = { num: 30000, den: 1001 };
const settings = { minSeconds: 60, partSeconds: 30 };

function recipe(presetId: string): SplittableRecipe {
  const found = splittableRecipe(presetId);
  if (!found) throw new Error(`${presetId} should split`);
  return found;
}

/** A source of constant rate, a keyframe every `keyint` frames. */
function source(
  seconds: number,
  fps: FrameRate = NTSC,
  audio = true,
  keyint = 30,
): { probe: ProbeSummary; facts: SplitFacts } {
  const count = Math.round((seconds * fps.num) / fps.den);
  const frameTimes = Array.from({ length: count }, (_, i) => (i * fps.den) / fps.num);
  const keyframes = Array.from({ length: Math.ceil(count / keyint) }, (_, i) => i * keyint);
  const video = {
    index: 0,
    codec: "h264",
    width: 1920,
    height: 1080,
    sampleAspect: 1,
    fps: fps.num / fps.den,
    frameCount: count,
  };
  return {
    probe: {
      duration: seconds,
      video,
      audio: audio ? [{ index: 1, codec: "aac", channels: 2, sampleRate: 48000, language: null }] : [],
      subtitles: [],
    },
    facts: { fps, frameTimes, keyframes, constantRate: true, rotated: false, audioStart: audio ? 0.021 : null },
  };
}

describe("which jobs split (docs/scaling.md#which-jobs-split)", () => {
  it("single files do; ladders (streams, which split their own way), audio, utilities and timelines do not", () => {
    for (const id of ["mp4_264_720p", "mp4_265_1080p_efficient", "webm_vp9_1080p", "social_264_square_1080"]) {
      expect(splittableRecipe(id), id).not.toBeNull();
    }
    for (const id of [
      "hls_abr_264_standard",
      "dash_abr_264_standard",
      "cmaf_abr_265_standard",
      "hls_abr_av1_efficient",
      "live_hls_264_lowlatency",
      "live_dash_264_lowlatency",
      "audio_mp3_hq",
      "audio_aac_podcast",
      "util_thumbnails",
      "util_sprite_vtt",
      "util_subs_sidecar_basic",
      "filter_loudnorm_ebu_r128",
      "edl_custom",
      "nope",
    ]) {
      expect(splittableRecipe(id), id).toBeNull();
    }
  });

  it("a source no longer than SPLIT_MIN_SECONDS, of a variable rate, or rotated, is encoded whole", () => {
    const short = source(60);
    expect(planSplit(short.probe, short.facts, settings)).toBeNull();
    const long = source(120);
    expect(planSplit(long.probe, { ...long.facts, constantRate: false }, settings)).toBeNull();
    expect(planSplit(long.probe, { ...long.facts, rotated: true }, settings)).toBeNull();
    expect(planSplit(long.probe, long.facts, settings)).not.toBeNull();
  });
});

describe("the parts", () => {
  /**
   * Sources longer than SPLIT_MIN_SECONDS, of a constant rate: such a source splits unless it
   * fits in one part, when it is encoded whole. Each case is drawn as one or the other on
   * purpose, and says which.
   */
  const sources = fc.record({
    fps: fc.constantFrom<FrameRate>(NTSC, { num: 25, den: 1 }, { num: 60, den: 1 }, { num: 24000, den: 1001 }),
    keyint: fc.integer({ min: 1, max: 900 }),
  });
  /** Longer than one part by 5 s or more: a 2 s unit, and the up to 1 s a part gains rounded to whole units. */
  const splits = fc.integer({ min: 2, max: 120 }).chain((partSeconds) =>
    fc.record({
      partSeconds: fc.constant(partSeconds),
      seconds: fc.integer({ min: Math.max(61, partSeconds + 5), max: 4000 }),
      whole: fc.constant(false),
    }),
  );
  /** No longer than one part. */
  const fitsOnePart = fc.integer({ min: 61, max: 300 }).chain((seconds) =>
    fc.record({
      seconds: fc.constant(seconds),
      partSeconds: fc.integer({ min: seconds, max: seconds + 120 }),
      whole: fc.constant(true),
    }),
  );

  it("a source that fits in one part is encoded whole; any other parts cover every frame once, in order, each at least a unit long", () => {
    fc.assert(
      fc.property(sources, fc.oneof(splits, fitsOnePart), ({ fps, keyint }, { seconds, partSeconds, whole }) => {
        const { probe, facts } = source(seconds, fps, true, keyint);
        const plan = planSplit(probe, facts, { minSeconds: 60, partSeconds });
        const meant = whole ? "fits in one part: encoded whole" : "holds more than one part: split";
        expect(plan === null, `${seconds} s in parts of ${partSeconds} s ${meant}`).toBe(whole);
        if (!plan) return;
        expect(plan.parts.length).toBeGreaterThanOrEqual(2);
        expect(plan.parts.length).toBeLessThanOrEqual(200);
        let next = 0;
        for (const part of plan.parts) {
          expect(part.firstFrame).toBe(next);
          expect(part.from).toBeCloseTo(facts.frameTimes[part.firstFrame], 9);
          expect(part.frameCount).toBeGreaterThanOrEqual(plan.gopFrames);
          next += part.frameCount;
        }
        expect(next).toBe(facts.frameTimes.length);
        expect(plan.totalFrames).toBe(facts.frameTimes.length);
      }),
    );
  });

  it("end on a source keyframe near where they would end, so no piece starts before its part", () => {
    // Keyframes every 250 frames, as x264 places them by default; parts of 900 frames would end 150 past one.
    const { probe, facts } = source(600, NTSC, true, 250);
    const file = planSplit(probe, facts, settings);
    expect(file?.parts.map((p) => p.firstFrame).slice(0, 5)).toEqual([0, 1000, 2000, 3000, 4000]);
    expect(file?.parts.slice(1).every((p) => p.firstFrame % 250 === 0)).toBe(true);
    // Keyframes 2000 frames apart: a part with none within a quarter of a part of its end keeps its length.
    const sparse = source(600, NTSC, true, 2000);
    const far = planSplit(sparse.probe, sparse.facts, settings);
    expect(far?.parts.map((p) => p.firstFrame).slice(0, 5)).toEqual([0, 900, 2000, 2900, 4000]);
  });

  it("are about SPLIT_PART_SECONDS long, on the 2 s grid", () => {
    const { probe, facts } = source(600);
    expect(gopFramesOf(NTSC)).toBe(60);
    expect(gopFramesOf({ num: 25, den: 1 })).toBe(50);
    const file = planSplit(probe, facts, settings);
    expect(file?.gopFrames).toBe(60);
    expect(file?.parts.length).toBe(20);
    expect(file?.parts[0].frameCount).toBe(900);
    expect(file?.parts[1].from).toBeCloseTo((900 * 1001) / 30000, 9);
  });

  it("past 200 parts of SPLIT_PART_SECONDS (an 8-hour source), grow to fit 200, every frame in one", () => {
    const { probe, facts } = source(8 * 3600);
    const plan = planSplit(probe, facts, settings);
    if (!plan) throw new Error("8 hours should split");
    expect(plan.parts).toHaveLength(200);
    // 863,136 frames over 200 parts: 72 units of 2 s each (144 s), the last taking the rest.
    expect(new Set(plan.parts.slice(0, -1).map((p) => p.frameCount))).toEqual(new Set([72 * 60]));
    expect(plan.parts.reduce((sum, p) => sum + p.frameCount, 0)).toBe(facts.frameTimes.length);
  });

  it("place the audio against the first video frame, and know a source without any", () => {
    const withAudio = source(120);
    const plan = planSplit(
      withAudio.probe,
      { ...withAudio.facts, frameTimes: withAudio.facts.frameTimes.map((t) => t + 0.5) },
      settings,
    );
    expect(plan?.audio).toBe(true);
    expect(plan?.audioStart).toBeCloseTo(0.021 - 0.5, 9);
    const silent = source(120, NTSC, false);
    expect(planSplit(silent.probe, silent.facts, settings)?.audio).toBe(false);
  });
});

describe("the facts read off the packets", () => {
  it("frame times come sorted from the packets' decode order, in seconds, with the keyframes among them", () => {
    expect(framesOf("0,K_\n3003,__\n1001,__\n2002,__\n4004,K_\n", { num: 1, den: 30000 })).toEqual({
      frameTimes: [0, 1001 / 30000, 2002 / 30000, 3003 / 30000, 4004 / 30000],
      keyframes: [0, 4],
    });
    expect(framesOf("0,K_\nN/A,__\n", { num: 1, den: 30000 })).toBeNull();
  });

  it("packets an edit list discards (flag D) are no frames: the first frame shown may be no keyframe", () => {
    expect(framesOf("-2002,KD\n-1001,_D\n0,__\n1001,__\n2002,K_\n", { num: 1, den: 30000 })).toEqual({
      frameTimes: [0, 1001 / 30000, 2002 / 30000],
      keyframes: [2],
    });
  });

  it("a constant rate allows a quarter period of jitter, and no more", () => {
    const period = 1001 / 30000;
    expect(isConstantRate([0, period, 2 * period + period / 5], NTSC)).toBe(true);
    expect(isConstantRate([0, period, 2 * period + period / 3], NTSC)).toBe(false);
    expect(isConstantRate([0, 2 * period], NTSC)).toBe(false);
  });
});

describe("the audio's task and the join (docs/scaling.md#the-audio)", () => {
  const { probe, facts } = source(120);
  const plan = planSplit(probe, facts, settings);

  it("the audio is encoded once, placed against the first video frame; the join copies it beside the parts", () => {
    if (!plan) throw new Error("120 s should split");
    const tail = (args: string[]) => args.slice(args.indexOf("-nostats") + 1);
    expect(tail(audioTaskCommand(recipe("mp4_264_720p"), plan, { path: "in" }, "out.m4a").args)).toEqual([
      "-map",
      "0:a:0",
      "-af",
      "asetpts=PTS-STARTPTS,aresample=async=1:min_hard_comp=0.01:first_pts=0,adelay=delays=21:all=1",
      "-c:a",
      "aac",
      "-ar",
      "48000",
      "-ac",
      "2",
      "-b:a",
      "128k",
      "-f",
      "mp4",
      "out.m4a",
    ]);
    expect(audioTaskCommand(recipe("webm_vp9_1080p"), plan, { path: "in" }, "out.mka").args).toEqual(
      expect.arrayContaining(["libopus", "matroska"]),
    );
    const joined = joinCommand(recipe("mp4_264_720p"), { list: "l", audio: "a.m4a" }, { dir: "o", file: "output.mp4" });
    expect(joined.args).not.toContain("-c:a");
    expect(tail(joined.args)).toEqual([
      "-map",
      "0:v:0",
      "-map",
      "1:a:0",
      "-c",
      "copy",
      "-tag:v",
      "avc1",
      "-movflags",
      "+faststart",
      "o/output.mp4",
    ]);
    const silent = joinCommand(recipe("webm_vp9_1080p"), { list: "l", audio: null }, { dir: "o", file: "output.webm" });
    expect(tail(silent.args)).toEqual(["-map", "0:v:0", "-c", "copy", "o/output.webm"]);
  });
});
