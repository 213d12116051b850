import { describe, expect, it } from "vitest";
import { EDL_LIMITS, MAX_TEXT_LINES } from "../../../domain/edl/limits";
import { READ_CEILING } from "../../../domain/edl/timeline";
import { validateEdl } from "../../../domain/edl/validate";
import { PLAN_DISPLAY_NAMES, PLAN_IDS } from "../../../domain/plans";
import { edl, media, overlayClip, textClip, track, videoClip, withTrack } from "./fixtures";

/** `count` one-second clips back to back, all from one source. */
const clips = (count: number) =>
  Array.from({ length: count }, (_, i) => videoClip({ id: `c${i}`, in: 0, out: 1, startTime: i }));

/** `count` distinct URLs, two per clip (src and replaceAudio), so the clip count stays low. */
function assets(count: number) {
  const urls = Array.from({ length: count }, (_, i) => media(`asset-${i}`));
  return Array.from({ length: Math.ceil(count / 2) }, (_, i) =>
    videoClip({
      id: `a${i}`,
      startTime: i * 10,
      src: urls[2 * i],
      ...(urls[2 * i + 1] && { replaceAudio: urls[2 * i + 1] }),
    }),
  );
}

/** The video track plus empty text tracks up to `count` tracks. */
const tracks = (count: number) =>
  edl([track("video", [videoClip()]), ...Array.from({ length: count - 1 }, () => track("text", []))]);

const oneClipLasting = (seconds: number) => edl([track("video", [videoClip({ in: 0, out: seconds })])]);

describe("contract §9.2 Timeline limits", () => {
  it("the table: clips, assets, duration, tracks per plan", () => {
    expect(EDL_LIMITS).toEqual({
      free: { clips: 5, assets: 5, durationSeconds: 600, tracks: 2 },
      pro: { clips: 20, assets: 20, durationSeconds: 1800, tracks: 5 },
      business: { clips: 100, assets: 100, durationSeconds: 7200, tracks: 20 },
      enterprise: { clips: 1000, assets: 500, durationSeconds: 36000, tracks: 50 },
    });
  });

  describe.each(PLAN_IDS)("plan %s", (plan) => {
    const limits = EDL_LIMITS[plan];
    const name = PLAN_DISPLAY_NAMES[plan];

    it(`max clips: ${limits.clips} is valid, one more is an error`, () => {
      expect(validateEdl(edl([track("video", clips(limits.clips))]), plan).errors).toEqual([]);
      expect(validateEdl(edl([track("video", clips(limits.clips + 1))]), plan).errors).toEqual([
        `Too many clips for the ${name} plan: ${limits.clips + 1} (maximum ${limits.clips})`,
      ]);
    });

    it(`max assets: ${limits.assets} is valid, one more is an error`, () => {
      expect(validateEdl(edl([track("video", assets(limits.assets))]), plan).errors).toEqual([]);
      expect(validateEdl(edl([track("video", assets(limits.assets + 1))]), plan).errors).toEqual([
        `Too many assets for the ${name} plan: ${limits.assets + 1} (maximum ${limits.assets})`,
      ]);
    });

    it(`max tracks: ${limits.tracks} is valid, one more is an error`, () => {
      expect(validateEdl(tracks(limits.tracks), plan).errors).toEqual([]);
      expect(validateEdl(tracks(limits.tracks + 1), plan).errors).toEqual([
        `Too many tracks for the ${name} plan: ${limits.tracks + 1} (maximum ${limits.tracks})`,
      ]);
    });

    it(`max duration: ${limits.durationSeconds} s is valid, beyond is an error`, () => {
      expect(validateEdl(oneClipLasting(limits.durationSeconds), plan).errors).toEqual([]);
      expect(validateEdl(oneClipLasting(limits.durationSeconds + 0.5), plan).errors).toEqual([
        `Timeline too long for the ${name} plan: ${limits.durationSeconds + 0.5} seconds (maximum ${limits.durationSeconds} seconds)`,
      ]);
    });
  });

  it('limit errors use the display name: "Too many clips for the Starter plan: 6 (maximum 5)"', () => {
    expect(validateEdl(edl([track("video", clips(6))]), "free").errors).toEqual([
      "Too many clips for the Starter plan: 6 (maximum 5)",
    ]);
    expect(validateEdl(edl([track("video", clips(21))]), "pro").errors).toEqual([
      "Too many clips for the Indie/Pro plan: 21 (maximum 20)",
    ]);
  });

  it("every limit exceeded is reported, alongside field errors", () => {
    const document = edl([
      track("video", [...clips(6), videoClip({ id: "bad", speed: 0 })]),
      track("text", []),
      track("overlay", []),
    ]);
    expect(validateEdl(document, "free").errors).toEqual([
      "timeline.tracks[0].clips[6].speed: must be between 0.1 and 100",
      "Too many clips for the Starter plan: 7 (maximum 5)",
      "Too many tracks for the Starter plan: 3 (maximum 2)",
    ]);
  });

  it("decision: past the most any plan allows, a timeline is judged on its counts alone, its clips not read", () => {
    const emptyClips = edl([
      track(
        "video",
        Array.from({ length: 100_000 }, () => ({})),
      ),
    ]);
    expect(validateEdl(emptyClips, "free")).toMatchObject({
      valid: false,
      errors: ["Too many clips for the Starter plan: 100000 (maximum 5)"],
      warnings: [],
      stats: { clips: 100_000, tracks: 1, assets: 0, duration: 0 },
    });
    const overlapping = edl([
      track(
        "video",
        Array.from({ length: READ_CEILING.clips + 1 }, (_, i) => videoClip({ id: `c${i}`, startTime: 0 })),
      ),
    ]);
    expect(validateEdl(overlapping, "enterprise")).toMatchObject({
      errors: ["Too many clips for the Enterprise plan: 1001 (maximum 1000)"],
      warnings: [],
    });
    const emptyTracks = { version: "1.0", timeline: { tracks: Array.from({ length: 100_000 }, () => ({})) } };
    expect(validateEdl(emptyTracks, "pro").errors).toEqual([
      "Too many tracks for the Indie/Pro plan: 100000 (maximum 5)",
    ]);
  });

  it("at the most any plan allows, every clip is still read and its errors reported", () => {
    expect(READ_CEILING).toEqual({ clips: 1000, tracks: 50 });
    const clips = Array.from({ length: READ_CEILING.clips }, (_, i) =>
      videoClip({ id: `c${i}`, in: 0, out: 1, startTime: i }),
    );
    clips[999] = videoClip({ id: "last", in: 0, out: 1, startTime: 999, speed: 0 });
    expect(validateEdl(edl([track("video", clips)]), "free").errors).toEqual([
      "timeline.tracks[0].clips[999].speed: must be between 0.1 and 100",
      "Too many clips for the Starter plan: 1000 (maximum 5)",
      "Timeline too long for the Starter plan: 1000 seconds (maximum 600 seconds)",
    ]);
  });

  it("decision: malformed clip entries still count toward the clip limit", () => {
    const result = validateEdl(edl([track("video", [...clips(5), "junk"])]), "free");
    expect(result.stats.clips).toBe(6);
    expect(result.errors).toContain("Too many clips for the Starter plan: 6 (maximum 5)");
  });
});

describe("contract §9.2 Timeline limits › duration is the end of the last clip on any track", () => {
  it("a video clip ends at startTime + (out − in) / speed", () => {
    const result = validateEdl(edl([track("video", [videoClip({ in: 10, out: 40, startTime: 5, speed: 2 })])]), "free");
    expect(result.stats.duration).toBe(20);
  });

  it("a slowed clip can cross the limit its source span would not", () => {
    expect(validateEdl(oneClipLasting(300), "free").valid).toBe(true);
    const slowed = edl([track("video", [videoClip({ in: 0, out: 300, speed: 0.5 })])]);
    expect(validateEdl(slowed, "free")).toMatchObject({ valid: true, stats: { duration: 600 } });
    const slower = edl([track("video", [videoClip({ in: 0, out: 301, speed: 0.5 })])]);
    expect(validateEdl(slower, "free").errors).toEqual([
      "Timeline too long for the Starter plan: 602 seconds (maximum 600 seconds)",
    ]);
  });

  it("overlay and text clips end at startTime + duration and can set the length", () => {
    expect(validateEdl(withTrack("text", [textClip({ startTime: 590, duration: 11 })]), "free").errors).toEqual([
      "Timeline too long for the Starter plan: 601 seconds (maximum 600 seconds)",
    ]);
    expect(
      validateEdl(withTrack("overlay", [overlayClip({ startTime: 30, duration: 7.25 })]), "free").stats.duration,
    ).toBe(37.25);
  });

  it("decision: the duration is rounded to the millisecond, and the limit reads that value", () => {
    const third = edl([track("video", [videoClip({ in: 0, out: 10, speed: 3 })])]);
    expect(validateEdl(third, "free").stats.duration).toBe(3.333);
    expect(validateEdl(oneClipLasting(600.0004), "free").valid).toBe(true);
  });
});

describe("contract §3.10 EDL document › every distinct URL (src and replaceAudio) counts once toward the asset limit", () => {
  const assetsOf = (document: unknown) => validateEdl(document, "enterprise").stats.assets;

  it("reusing one URL for several clips costs one asset", () => {
    expect(assetsOf(edl([track("video", clips(4))]))).toBe(1);
  });

  it("replaceAudio URLs count, once, even when another clip uses the same URL as src", () => {
    const document = edl([
      track("video", [
        videoClip({ src: media("a.mp4"), replaceAudio: media("music.mp3") }),
        videoClip({ src: media("b.mp4"), replaceAudio: media("music.mp3"), startTime: 10 }),
        videoClip({ src: media("music.mp3"), startTime: 20 }),
      ]),
    ]);
    expect(assetsOf(document)).toBe(3);
  });

  it("overlay images count across tracks; text clips fetch nothing", () => {
    const document = edl([
      track("video", [videoClip({ src: media("a.mp4") })]),
      track("overlay", [overlayClip({ src: media("logo.png") }), overlayClip({ src: media("a.mp4") })]),
      track("text", [textClip()]),
    ]);
    expect(assetsOf(document)).toBe(2);
  });

  it("decision: URLs are compared exactly as written", () => {
    const document = edl([
      track("video", [
        videoClip({ src: "https://x.test/a.mp4" }),
        videoClip({ src: "https://x.test/a.mp4?v=2", startTime: 10 }),
      ]),
    ]);
    expect(assetsOf(document)).toBe(2);
  });

  it("six distinct URLs on three clips are too many for Starter", () => {
    expect(validateEdl(edl([track("video", assets(6))]), "free").errors).toEqual([
      "Too many assets for the Starter plan: 6 (maximum 5)",
    ]);
  });
});

describe("decision: limits on every plan that keep a timeline renderable", () => {
  it(`at most ${MAX_TEXT_LINES} lines of text across the text clips (each line is a drawtext filter of FFmpeg's)`, () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i}`).join("\n");
    const texts = (...counts: number[]) =>
      withTrack(
        "text",
        counts.map((n, i) => textClip({ id: `t${i}`, text: lines(n) })),
      );
    expect(validateEdl(texts(600, 400), "free").errors).toEqual([]);
    expect(validateEdl(texts(600, 401), "enterprise").errors).toEqual([
      `Too many lines of text: 1001 across the text clips (maximum ${MAX_TEXT_LINES})`,
    ]);
    // One text of many lines is a small body that would fail its render (docs/reliability.md#defects-found-and-fixed).
    expect(validateEdl(withTrack("text", [textClip({ text: "a\r\n".repeat(5000) })]), "free").errors).toEqual([
      `Too many lines of text: 5001 across the text clips (maximum ${MAX_TEXT_LINES})`,
    ]);
  });

  it("a timeline at least 0.1 s long, and a frame long at output.fps (shorter, it has no frame to encode)", () => {
    expect(validateEdl(oneClipLasting(0.1), "free").errors).toEqual([]);
    expect(validateEdl(oneClipLasting(0.01), "free").errors).toEqual([
      "Timeline too short: 0.01 seconds (minimum 0.1 seconds)",
    ]);
    const atTwoFps = (seconds: number) =>
      edl([track("video", [videoClip({ in: 0, out: seconds })])], { output: { fps: 2 } });
    expect(validateEdl(atTwoFps(0.5), "free").errors).toEqual([]);
    expect(validateEdl(atTwoFps(0.4), "free").errors).toEqual([
      "Timeline too short: 0.4 seconds (minimum 0.5 seconds, one frame at 2 fps)",
    ]);
  });
});
