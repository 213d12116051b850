import { describe, expect, it } from "vitest";
import { validateEdl } from "../../../domain/edl/validate";
import { edl, errorsOf, overlayClip, textClip, track, videoClip, videoEdl } from "./fixtures";

describe("contract §3.10 EDL document › version", () => {
  it("is required", () => {
    const { version: _, ...rest } = videoEdl(videoClip());
    expect(errorsOf(rest)).toEqual(["version: is required"]);
  });

  it.each([["1.0"], ["1.1"]])("%s is accepted", (version) => {
    expect(errorsOf({ ...videoEdl(videoClip()), version })).toEqual([]);
  });

  it.each([["1.2"], ["2.0"], [1], [1.0], [1.1], ["1"], [""]])(
    "any other version (%j) is an error naming the versions allowed",
    (version) => {
      expect(errorsOf({ ...videoEdl(videoClip()), version })).toEqual(['version: must be one of "1.0", "1.1"']);
    },
  );
});

describe("contract §3.10 EDL document › the document itself", () => {
  it.each([[null], [[]], [42], ["edl"], [true], [undefined]])("a non-object (%j) is one error", (input) => {
    expect(validateEdl(input, "free")).toMatchObject({ valid: false, errors: ["EDL document must be a JSON object"] });
  });

  it("a minimal timeline is valid and comes back with defaults applied", () => {
    const result = validateEdl(videoEdl({ id: "a", src: "https://x.test/a.mp4", in: 1, out: 3, startTime: 0 }), "free");
    expect(result.valid).toBe(true);
    expect(result.errors).toEqual([]);
    expect(result.edl?.timeline.tracks).toEqual([
      {
        type: "video",
        clips: [
          { id: "a", src: "https://x.test/a.mp4", in: 1, out: 3, startTime: 0, speed: 1, mute: false, volume: 0 },
        ],
      },
    ]);
  });

  it("an invalid timeline has no validated EDL", () => {
    expect(validateEdl(videoEdl(videoClip({ speed: 0 })), "free").edl).toBeUndefined();
  });

  it("metadata is optional but must be an object when given", () => {
    expect(errorsOf({ ...videoEdl(videoClip()), metadata: { name: "x" } })).toEqual([]);
    expect(errorsOf({ ...videoEdl(videoClip()), metadata: "x" })).toEqual(["metadata: must be an object"]);
  });
});

describe("contract §3.10 EDL document › timeline holds tracks, an array", () => {
  it("timeline is required", () => {
    expect(errorsOf({ version: "1.0" })).toEqual(["timeline: is required"]);
  });

  it("timeline must be an object", () => {
    expect(errorsOf({ version: "1.0", timeline: [] })).toEqual(["timeline: must be an object"]);
  });

  it("tracks is required and must be an array", () => {
    expect(errorsOf({ version: "1.0", timeline: {} })).toEqual(["timeline.tracks: is required"]);
    expect(errorsOf({ version: "1.0", timeline: { tracks: {} } })).toEqual(["timeline.tracks: must be an array"]);
  });

  it("a track must be an object with a clips array", () => {
    expect(errorsOf(edl([track("video", [videoClip()]), "text"]))).toEqual(["timeline.tracks[1]: must be an object"]);
    expect(errorsOf(edl([track("video", [videoClip()]), { type: "text" }]))).toEqual([
      "timeline.tracks[1].clips: is required",
    ]);
    expect(errorsOf(edl([track("video", [videoClip()]), { type: "text", clips: 3 }]))).toEqual([
      "timeline.tracks[1].clips: must be an array",
    ]);
  });

  it("a clip must be an object", () => {
    expect(errorsOf(videoEdl(videoClip(), "clip"))).toEqual(["timeline.tracks[0].clips[1]: must be an object"]);
  });
});

describe("contract §3.10 EDL document › track types video, overlay, text", () => {
  it("accepts the three types", () => {
    const document = edl([
      track("video", [videoClip()]),
      track("overlay", [overlayClip()]),
      track("text", [textClip()]),
    ]);
    expect(errorsOf(document)).toEqual([]);
  });

  it.each([["audio"], ["Video"], [1], [undefined]])("rejects type %j", (type) => {
    const errors = errorsOf(edl([track("video", [videoClip()]), { type, clips: [] }]));
    expect(errors).toEqual([
      type === undefined
        ? "timeline.tracks[1].type: is required"
        : "timeline.tracks[1].type: must be one of video, overlay, text",
    ]);
  });
});

describe("contract §3.10 EDL document › the video track (decision: exactly one, with at least one clip)", () => {
  it("a timeline without a video track is invalid", () => {
    expect(errorsOf(edl([track("text", [textClip()])]))).toEqual([
      "timeline.tracks: must include a video track with at least one clip",
    ]);
    expect(errorsOf(edl([]))).toEqual(["timeline.tracks: must include a video track with at least one clip"]);
  });

  it("the video track must have a clip", () => {
    expect(errorsOf(edl([track("text", []), track("video", [])]))).toEqual([
      "timeline.tracks[1].clips: the video track must have at least one clip",
    ]);
  });

  it("a second video track is an error", () => {
    expect(errorsOf(edl([track("video", [videoClip()]), track("video", [videoClip()])]))).toEqual([
      "timeline.tracks[1].type: only one video track is allowed",
    ]);
  });

  it("overlay and text tracks may be empty", () => {
    expect(errorsOf(edl([track("video", [videoClip()]), track("overlay", []), track("text", [])]))).toEqual([]);
  });
});

describe("contract §2.3 Conventions › unknown request fields are ignored", () => {
  it("unknown fields anywhere do not fail and are not carried into the validated EDL", () => {
    const document = {
      ...edl([{ ...track("video", [videoClip({ id: "a", colour: "red" })]), name: "main" }]),
      extra: { deep: [1, 2] },
    };
    const result = validateEdl(document, "free");
    expect(result.errors).toEqual([]);
    expect(result.edl?.timeline.tracks[0].clips[0]).not.toHaveProperty("colour");
    expect(result.edl?.timeline.tracks[0]).not.toHaveProperty("name");
  });

  it("decision: null in an optional field means not given", () => {
    const result = validateEdl({ ...videoEdl(videoClip({ speed: null, replaceAudio: null })), output: null }, "free");
    expect(result.errors).toEqual([]);
    expect(result.edl?.timeline.tracks[0].clips[0]).toMatchObject({ speed: 1 });
  });

  it("decision: null in a required field is missing", () => {
    expect(errorsOf(videoEdl(videoClip({ src: null })))).toEqual(["timeline.tracks[0].clips[0].src: is required"]);
  });

  it("decision: values are not coerced, a number sent as a string is an error", () => {
    expect(errorsOf(videoEdl(videoClip({ in: "0", out: "10" })))).toEqual([
      "timeline.tracks[0].clips[0].in: must be a number",
      "timeline.tracks[0].clips[0].out: must be a number",
    ]);
  });
});
