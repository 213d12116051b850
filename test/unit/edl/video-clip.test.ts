import { describe, expect, it } from "vitest";
import type { VideoClip } from "../../../domain/edl/validated-edl";
import { validateEdl } from "../../../domain/edl/validate";
import { CLIP0, errorsOf, videoClip, videoEdl } from "./fixtures";

const errorsFor = (fields: Record<string, unknown>) => errorsOf(videoEdl(videoClip(fields)));
const clipOf = (fields: Record<string, unknown>) =>
  validateEdl(videoEdl(videoClip(fields)), "free").edl?.timeline.tracks[0].clips[0] as VideoClip | undefined;

describe("contract §3.12 Video clip › required fields", () => {
  it.each(["id", "src", "in", "out", "startTime"])("%s is required", (field) => {
    const clip: Record<string, unknown> = videoClip();
    delete clip[field];
    expect(errorsOf(videoEdl(clip))).toEqual([`${CLIP0}.${field}: is required`]);
  });

  it("id must be a non-blank string", () => {
    expect(errorsFor({ id: 7 })).toEqual([`${CLIP0}.id: must be a string`]);
    expect(errorsFor({ id: "  " })).toEqual([`${CLIP0}.id: must not be empty`]);
  });
});

describe("contract §3.12 Video clip › src is a public URL", () => {
  it.each(["https://cdn.example.com/a.mp4", "http://example.com/v?x=1"])("%s is accepted", (src) => {
    expect(errorsFor({ src })).toEqual([]);
  });

  it.each(["http://127.0.0.1:8000/a.mp4", "http://[::1]/a.mp4"])(
    "%s is accepted: loopback is the encoder's call (refused in production, a local server in development)",
    (src) => {
      expect(errorsFor({ src })).toEqual([]);
    },
  );

  it.each([
    "ftp://example.com/a.mp4",
    "/videos/a.mp4",
    "a.mp4",
    "https://",
    "file:///etc/passwd",
    42,
    "https://user:pw@cdn.example.com/a.mp4",
    "http://10.0.0.5/a.mp4",
    "http://0xa9fea9fe/",
    "http://[fd00::1]/a.mp4",
    "http://0.0.0.0:80/",
  ])("%j is rejected", (src) =>
    expect(errorsFor({ src })).toEqual([
      `${CLIP0}.src: must be an absolute http or https URL without a user name or password, at a public address`,
    ]),
  );
});

describe("contract §3.12 Video clip › in and out", () => {
  it("out must be greater than in", () => {
    expect(errorsFor({ in: 5, out: 5 })).toEqual([`${CLIP0}.out: must be greater than in`]);
    expect(errorsFor({ in: 5, out: 4 })).toEqual([`${CLIP0}.out: must be greater than in`]);
    expect(errorsFor({ in: 5, out: 5.001, startTime: 1 })).toEqual([]);
  });

  it("in must be at least 0 (decision: and at most 100 hours, as every time field)", () => {
    expect(errorsFor({ in: -1 })).toEqual([`${CLIP0}.in: must be between 0 and 360000`]);
    expect(errorsFor({ in: 0 })).toEqual([]);
  });

  it("decision: time fields stay at or below 100 hours (360000 s)", () => {
    // Within the field rules; only the plan's duration limit objects.
    expect(errorsFor({ in: 359_990, out: 360_000, startTime: 360_000 })).toEqual([
      "Timeline too long for the Enterprise plan: 360010 seconds (maximum 36000 seconds)",
    ]);
    expect(errorsFor({ in: 0, out: 360_001, startTime: 1e300 })).toEqual([
      `${CLIP0}.out: must be between 0 and 360000`,
      `${CLIP0}.startTime: must be between 0 and 360000`,
    ]);
  });

  it("startTime must be at least 0", () => {
    expect(errorsFor({ startTime: -0.5 })).toEqual([`${CLIP0}.startTime: must be between 0 and 360000`]);
  });
});

describe("contract §3.12 Video clip › speed 0.1 to 100, default 1.0 (contract §9.1 Limits › Speed per clip)", () => {
  it.each([0.1, 1, 2.5, 100])("speed %s is accepted", (speed) => {
    expect(errorsFor({ speed })).toEqual([]);
  });

  it.each([0, 0.09, 100.01, -1])("speed %s is rejected", (speed) => {
    expect(errorsFor({ speed })).toEqual([`${CLIP0}.speed: must be between 0.1 and 100`]);
  });

  it("defaults to 1", () => {
    expect(clipOf({})?.speed).toBe(1);
  });
});

describe("contract §3.12 Video clip › volume -20 to +20 dB, default 0 (contract §9.1 Limits › Volume per clip)", () => {
  it.each([-20, 0, 6.5, 20])("volume %s is accepted", (volume) => {
    expect(errorsFor({ volume })).toEqual([]);
  });

  it.each([-20.5, 21])("volume %s is rejected", (volume) => {
    expect(errorsFor({ volume })).toEqual([`${CLIP0}.volume: must be between -20 and 20`]);
  });

  it("defaults to 0 dB", () => {
    expect(clipOf({})?.volume).toBe(0);
  });
});

describe("contract §3.12 Video clip › mute and replaceAudio", () => {
  it("mute must be a boolean, default false", () => {
    expect(errorsFor({ mute: "yes" })).toEqual([`${CLIP0}.mute: must be true or false`]);
    expect(clipOf({})?.mute).toBe(false);
    expect(clipOf({ mute: true })?.mute).toBe(true);
  });

  it("replaceAudio must be an absolute http(s) URL", () => {
    expect(clipOf({ replaceAudio: "https://x.test/m.mp3" })?.replaceAudio).toBe("https://x.test/m.mp3");
    expect(errorsFor({ replaceAudio: "m.mp3" })).toEqual([
      `${CLIP0}.replaceAudio: must be an absolute http or https URL without a user name or password, at a public address`,
    ]);
  });

  it("decision: mute with replaceAudio is valid, with a warning that the replacement is silenced", () => {
    const result = validateEdl(videoEdl(videoClip({ mute: true, replaceAudio: "https://x.test/m.mp3" })), "free");
    expect(result.valid).toBe(true);
    expect(result.warnings).toEqual([`${CLIP0}: mute is true, so replaceAudio is not heard`]);
  });
});

describe("contract §3.12 Video clip › every error of a clip is reported, not just the first", () => {
  it("collects all field errors", () => {
    expect(errorsFor({ id: 1, src: "x", in: 3, out: 2, startTime: -1, speed: 0, volume: 99 })).toEqual([
      `${CLIP0}.id: must be a string`,
      `${CLIP0}.src: must be an absolute http or https URL without a user name or password, at a public address`,
      `${CLIP0}.out: must be greater than in`,
      `${CLIP0}.startTime: must be between 0 and 360000`,
      `${CLIP0}.speed: must be between 0.1 and 100`,
      `${CLIP0}.volume: must be between -20 and 20`,
    ]);
  });

  it("paths name the track and clip index", () => {
    const errors = errorsOf(videoEdl(videoClip(), videoClip({ speed: 200 })));
    expect(errors).toEqual(["timeline.tracks[0].clips[1].speed: must be between 0.1 and 100"]);
  });
});
