import { describe, expect, it } from "vitest";
import { EXPERIMENTAL_FEATURES_WARNING, validateEdl } from "../../../domain/edl/validate";
import { edl, overlayClip, textClip, track, videoClip, videoEdl } from "./fixtures";

describe("contract §5.6 POST /edl › warnings: a track has overlapping clips", () => {
  it("overlapping video clips are valid, with a warning naming the track and both clips", () => {
    const result = validateEdl(
      videoEdl(videoClip({ id: "a", startTime: 0, in: 0, out: 10 }), videoClip({ id: "b", startTime: 8 })),
      "free",
    );
    expect(result.valid).toBe(true);
    expect(result.warnings).toEqual(["Track 0 (video) has overlapping clips: a and b"]);
  });

  it("clips that only touch do not overlap", () => {
    const result = validateEdl(videoEdl(videoClip({ startTime: 0 }), videoClip({ startTime: 10 })), "free");
    expect(result.warnings).toEqual([]);
  });

  it("the clips' order in the array does not matter; the timeline order does", () => {
    const result = validateEdl(
      videoEdl(videoClip({ id: "late", startTime: 5 }), videoClip({ id: "early", startTime: 0 })),
      "free",
    );
    expect(result.warnings).toEqual(["Track 0 (video) has overlapping clips: early and late"]);
  });

  it("speed changes where a clip ends", () => {
    const fast = videoEdl(videoClip({ id: "a", out: 10, speed: 2 }), videoClip({ id: "b", startTime: 5 }));
    expect(validateEdl(fast, "free").warnings).toEqual([]);
    const slow = videoEdl(videoClip({ id: "a", out: 10, speed: 0.5 }), videoClip({ id: "b", startTime: 15 }));
    expect(validateEdl(slow, "free").warnings).toEqual(["Track 0 (video) has overlapping clips: a and b"]);
  });

  it("three stacked clips give one warning per clip that starts too early", () => {
    const document = videoEdl(
      videoClip({ id: "a", out: 30 }),
      videoClip({ id: "b", startTime: 5 }),
      videoClip({ id: "c", startTime: 20 }),
    );
    expect(validateEdl(document, "pro").warnings).toEqual([
      "Track 0 (video) has overlapping clips: a and b",
      "Track 0 (video) has overlapping clips: a and c",
    ]);
  });

  it("overlay and text tracks are checked too, each on its own", () => {
    const document = edl([
      track("video", [videoClip()]),
      track("overlay", [overlayClip({ id: "logo" }), overlayClip({ id: "badge", startTime: 4 })]),
      track("text", [textClip({ id: "t1" }), textClip({ id: "t2", startTime: 1 })]),
    ]);
    expect(validateEdl(document, "pro").warnings).toEqual([
      "Track 1 (overlay) has overlapping clips: logo and badge",
      "Track 2 (text) has overlapping clips: t1 and t2",
    ]);
  });

  it("clips on different tracks never overlap each other", () => {
    const document = edl([track("video", [videoClip()]), track("text", [textClip({ startTime: 0 })])]);
    expect(validateEdl(document, "free").warnings).toEqual([]);
  });
});

describe("contract §3.12 Video clip › accepted but not applied: transform, crop, filters, transition, freeze", () => {
  it("they pass validation, are listed in stats.features and named in one warning", () => {
    const result = validateEdl(videoEdl(videoClip({ transform: { rotate: 90 }, crop: { x: 0 } })), "free");
    expect(result.valid).toBe(true);
    expect(result.stats.features).toEqual(["transform", "crop"]);
    expect(result.warnings).toEqual([`${EXPERIMENTAL_FEATURES_WARNING}: transform, crop`]);
    expect(result.warnings).toEqual(["Experimental features are accepted but not applied: transform, crop"]);
  });

  it("all five, distinct and in a stable order whatever order and how often they appear", () => {
    const document = videoEdl(
      videoClip({ freeze: true, transition: "fade" }),
      videoClip({ filters: ["blur"], transform: 1, freeze: 2, startTime: 10 }),
      videoClip({ crop: "x", transition: { type: "wipe" }, startTime: 20 }),
    );
    expect(validateEdl(document, "free").stats.features).toEqual([
      "transform",
      "crop",
      "filters",
      "transition",
      "freeze",
    ]);
  });

  it("they are not validated: any value passes", () => {
    const result = validateEdl(
      videoEdl(videoClip({ transform: "??", crop: -1, filters: 0, transition: [], freeze: false })),
      "free",
    );
    expect(result.valid).toBe(true);
  });

  it("they are not carried into the validated EDL", () => {
    const clip = validateEdl(videoEdl(videoClip({ transition: "fade" })), "free").edl?.timeline.tracks[0].clips[0];
    expect(clip).not.toHaveProperty("transition");
  });

  it("decision: they are flagged on overlay and text clips too; null counts as absent", () => {
    const document = edl([
      track("video", [videoClip({ crop: null })]),
      track("overlay", [overlayClip({ transition: "fade" })]),
      track("text", [textClip({ transform: { scale: 2 } })]),
    ]);
    expect(validateEdl(document, "pro").stats.features).toEqual(["transform", "transition"]);
  });

  it("they are reported on an invalid timeline as well", () => {
    const result = validateEdl(videoEdl(videoClip({ freeze: true, speed: 0 })), "free");
    expect(result.valid).toBe(false);
    expect(result.stats.features).toEqual(["freeze"]);
  });

  it("no feature, no warning", () => {
    expect(validateEdl(videoEdl(videoClip()), "free")).toMatchObject({ warnings: [], stats: { features: [] } });
  });
});

describe("contract §3.12 Video clip › id is a unique clip identifier (decision: unique across the EDL)", () => {
  it("a repeated id on the same track is an error pointing at the first use", () => {
    expect(validateEdl(videoEdl(videoClip({ id: "a" }), videoClip({ id: "a", startTime: 10 })), "free").errors).toEqual(
      ['timeline.tracks[0].clips[1].id: "a" is already used by timeline.tracks[0].clips[0]; clip ids must be unique'],
    );
  });

  it("a repeated id on another track, of another type, is an error too", () => {
    const document = edl([track("video", [videoClip({ id: "x" })]), track("text", [textClip({ id: "x" })])]);
    expect(validateEdl(document, "free").errors).toEqual([
      'timeline.tracks[1].clips[0].id: "x" is already used by timeline.tracks[0].clips[0]; clip ids must be unique',
    ]);
  });

  it("ids are case-sensitive", () => {
    expect(validateEdl(videoEdl(videoClip({ id: "a" }), videoClip({ id: "A", startTime: 10 })), "free").valid).toBe(
      true,
    );
  });
});
