import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { complexityScore } from "../../../domain/edl/complexity";
import { estimateSeconds } from "../../../domain/edl/estimate";
import { TRANSITION_TYPES, type VideoClip } from "../../../domain/edl/validated-edl";
import { validateEdl } from "../../../domain/edl/validate";
import { validateEdlExamples } from "../../../worker/routes/edl/examples";
import { CLIP0, edl, errorsOf, media, overlayClip, textClip, track, videoClip } from "./fixtures";

/** Version 1.1 documents (docs/timelines.md, version 1.1). */
const v11 = (tracks: unknown[], extra: Record<string, unknown> = {}) => ({ ...edl(tracks), version: "1.1", ...extra });
const video = (...clips: unknown[]) => v11([track("video", clips)]);
const captions = (...clips: unknown[]) => v11([track("video", [videoClip()]), track("caption", clips)]);
const CLIP1 = "timeline.tracks[0].clips[1]";
const CAPTION0 = "timeline.tracks[1].clips[0]";
/** Two 5 s clips, the second crossfading in over `d` seconds from `start`. */
const pair = (d: number, start: number, second: Record<string, unknown> = {}) =>
  video(
    videoClip({ id: "a", out: 5 }),
    videoClip({ id: "b", out: 5, startTime: start, transition: { in: { type: "crossfade", duration: d } }, ...second }),
  );

describe("docs/timelines.md version 1.1 › versions", () => {
  it('a 1.1 document without the new properties validates like 1.0, with version "1.1"', () => {
    const result = validateEdl(video(videoClip({ id: "a" })), "free");
    expect(result).toMatchObject({ valid: true, errors: [], warnings: [], stats: { features: [] } });
    expect(result.edl?.version).toBe("1.1");
  });

  it("in 1.0 the properties stay accepted, unvalidated and warned about; a caption track is unknown", () => {
    const document = edl([track("video", [videoClip({ transition: "any", freeze: 3 })]), track("caption", [])]);
    const result = validateEdl(document, "enterprise");
    expect(result.errors).toEqual(["timeline.tracks[1].type: must be one of video, overlay, text"]);
    expect(result.stats.features).toEqual(["transition", "freeze"]);
  });

  it("1.1 applies them: no warning, and stats.features in the documented order", () => {
    const document = v11([
      track("video", [
        videoClip({
          freeze: { at: 1, duration: 1 },
          filters: ["greyscale"],
          transform: { rotate: 90 },
          crop: { top: 0.1 },
          transition: { in: { type: "fade", duration: 1 } },
        }),
      ]),
      track("caption", [{ id: "c", cues: [{ start: 0, end: 1, text: "Hi" }] }]),
    ]);
    const result = validateEdl(document, "enterprise");
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(result.stats.features).toEqual(["transition", "crop", "transform", "filters", "freeze", "captions"]);
  });
});

describe("docs/timelines.md version 1.1 › transition on the video track", () => {
  it.each(TRANSITION_TYPES.filter((t) => t !== "fade"))(
    "%s between neighbours overlaps them by its duration",
    (type) => {
      const document = video(
        videoClip({ id: "a", out: 5 }),
        videoClip({ id: "b", out: 5, startTime: 4, transition: { in: { type, duration: 1 } } }),
      );
      const result = validateEdl(document, "enterprise");
      expect(result.errors).toEqual([]);
      // The overlap is intended: no "overlapping clips" warning, and the timeline is 10 − 1 s.
      expect(result.warnings).toEqual([]);
      expect(result.stats.duration).toBe(9);
    },
  );

  it("an unknown type is an error naming the path and the types allowed", () => {
    const [error] = errorsOf(video(videoClip({ transition: { in: { type: "spin", duration: 1 } } })));
    expect(error).toMatch(
      new RegExp(
        `^${CLIP0.replaceAll(/[[\].]/g, "\\$&")}\\.transition\\.in\\.type: must be one of fade, crossfade, wipeLeft, `,
      ),
    );
  });

  it.each([
    [{ in: { type: "fade" } }, `${CLIP0}.transition.in.duration: is required`],
    [{ out: { duration: 1 } }, `${CLIP0}.transition.out.type: is required`],
    [{ in: { type: "fade", duration: 0 } }, `${CLIP0}.transition.in.duration: must be greater than 0 and at most 60`],
    [{ in: "fade" }, `${CLIP0}.transition.in: must be an object`],
    ["fade", `${CLIP0}.transition: must be an object`],
    [
      { in: { type: "fade", duration: 11 } },
      `${CLIP0}.transition.in.duration: must be at most the clip's length on the timeline, 10 s`,
    ],
  ])("%j → %s", (transition, error) => {
    expect(errorsOf(video(videoClip({ transition })))).toEqual([error]);
  });

  it("a clip that does not overlap its predecessor by the duration is told where to start", () => {
    expect(errorsOf(pair(1, 5))).toEqual([
      `${CLIP1}.startTime: must be 4 so that its crossfade overlaps a (ending at 5) by 1 s`,
    ]);
  });

  it("within half a frame at the output rate is close enough", () => {
    expect(errorsOf({ ...pair(1, 4.01), output: { fps: 25 } })).toEqual([]);
    expect(errorsOf({ ...pair(1, 4.03), output: { fps: 25 } })).toHaveLength(1);
  });

  it("a transition.out joins the next clip the same way, and is reported on the clip that has it", () => {
    const out = (start: number) =>
      video(
        videoClip({ id: "a", out: 5, transition: { out: { type: "wipeLeft", duration: 2 } } }),
        videoClip({ id: "b", out: 5, startTime: start }),
      );
    expect(errorsOf(out(3))).toEqual([]);
    expect(errorsOf(out(5))).toEqual([
      `${CLIP0}.transition.out: the next clip, b, must start at 3 to overlap this one by 2 s (it starts at 5)`,
    ]);
  });

  it("both sides of a pair may give it only identically", () => {
    const both = (type: string, duration: number) =>
      video(
        videoClip({ id: "a", out: 5, transition: { out: { type: "crossfade", duration: 1 } } }),
        videoClip({ id: "b", out: 5, startTime: 4, transition: { in: { type, duration } } }),
      );
    expect(errorsOf(both("crossfade", 1))).toEqual([]);
    expect(errorsOf(both("wipeUp", 1))).toEqual([
      `${CLIP1}.transition.in: must match a's transition.out (crossfade, 1 s), or be left out`,
    ]);
  });

  it("a pair's duration fits both clips; a fade needs no neighbour", () => {
    const short = video(
      videoClip({ id: "a", out: 5, transition: { out: { type: "crossfade", duration: 2 } } }),
      videoClip({ id: "b", out: 1, startTime: 3 }),
    );
    expect(errorsOf(short)).toEqual([
      `${CLIP0}.transition.out.duration: must be at most the length of both clips, 1 s`,
    ]);
    expect(
      errorsOf(
        video(videoClip({ transition: { in: { type: "fade", duration: 2 }, out: { type: "fade", duration: 2 } } })),
      ),
    ).toEqual([]);
  });

  it("a transition with no neighbour blends with black, and is valid", () => {
    expect(errorsOf(video(videoClip({ transition: { in: { type: "wipeLeft", duration: 1 } } })))).toEqual([]);
  });
});

describe("docs/timelines.md version 1.1 › transition on overlay and text clips", () => {
  const layers = (type: string, clip: Record<string, unknown>) =>
    v11([track("video", [videoClip()]), track(type, [type === "text" ? textClip(clip) : overlayClip(clip)])]);

  it.each(["overlay", "text"])("%s clips take fade and the slides", (type) => {
    for (const name of ["fade", "slideLeft", "slideRight", "slideUp", "slideDown"]) {
      expect(errorsOf(layers(type, { transition: { in: { type: name, duration: 1 } } }))).toEqual([]);
    }
    expect(errorsOf(layers(type, { transition: { in: { type: "crossfade", duration: 1 } } }))).toEqual([
      "timeline.tracks[1].clips[0].transition.in.type: must be one of fade, slideLeft, slideRight, slideUp, slideDown",
    ]);
  });

  it("a fade and fadeIn together are an error; in and out fit the duration", () => {
    expect(errorsOf(layers("overlay", { fadeIn: 1, transition: { in: { type: "fade", duration: 1 } } }))).toEqual([
      "timeline.tracks[1].clips[0].transition.in.type: must not be fade when fadeIn is given: they do the same",
    ]);
    const long = { type: "slideLeft", duration: 3 };
    expect(errorsOf(layers("text", { transition: { in: long, out: long } }))).toEqual([
      "timeline.tracks[1].clips[0].transition.out.duration: transition.in and transition.out together must not exceed duration",
    ]);
  });
});

describe("docs/timelines.md version 1.1 › crop, transform, filters", () => {
  it("crop fields default to 0; each is below 1, and opposite sides together too", () => {
    const result = validateEdl(video(videoClip({ crop: { left: 0.25 } })), "free");
    expect((result.edl!.timeline.tracks[0].clips[0] as VideoClip).crop).toEqual({
      top: 0,
      bottom: 0,
      left: 0.25,
      right: 0,
    });
    expect(errorsOf(video(videoClip({ crop: { top: 1, left: -0.1 } })))).toEqual([
      `${CLIP0}.crop.top: must be at least 0 and below 1`,
      `${CLIP0}.crop.left: must be at least 0 and below 1`,
    ]);
    expect(errorsOf(video(videoClip({ crop: { top: 0.5, bottom: 0.5, left: 0.7, right: 0.3 } })))).toEqual([
      `${CLIP0}.crop.bottom: top and bottom together must be below 1`,
      `${CLIP0}.crop.right: left and right together must be below 1`,
    ]);
  });

  it("transform: rotate −360..360 (0), scale 0.01..10 (1), flip horizontal, vertical or both", () => {
    const result = validateEdl(video(videoClip({ transform: { flip: "both" } })), "free");
    expect((result.edl!.timeline.tracks[0].clips[0] as VideoClip).transform).toEqual({
      rotate: 0,
      flip: "both",
      scale: 1,
    });
    expect(errorsOf(video(videoClip({ transform: { rotate: 361, flip: "diagonal", scale: 0 } })))).toEqual([
      `${CLIP0}.transform.rotate: must be between -360 and 360`,
      `${CLIP0}.transform.flip: must be one of horizontal, vertical, both`,
      `${CLIP0}.transform.scale: must be between 0.01 and 10`,
    ]);
  });

  it("filters: names or {type, strength}, strength 0..1 defaulting to 1, at most 10", () => {
    const result = validateEdl(
      video(videoClip({ filters: ["sepia", { type: "blur", strength: 0.5 }, { type: "boost" }] })),
      "free",
    );
    expect((result.edl!.timeline.tracks[0].clips[0] as VideoClip).filters).toEqual([
      { type: "sepia", strength: 1 },
      { type: "blur", strength: 0.5 },
      { type: "boost", strength: 1 },
    ]);
    expect(errorsOf(video(videoClip({ filters: ["vhs", 3, { strength: 2 }] })))).toEqual([
      `${CLIP0}.filters[0]: must be one of greyscale, sepia, blur, sharpen, lighten, darken, contrast, saturate, negative, boost, muted`,
      `${CLIP0}.filters[1]: must be a filter name such as "greyscale", or an object {type, strength}`,
      `${CLIP0}.filters[2].type: is required`,
      `${CLIP0}.filters[2].strength: must be between 0 and 1`,
    ]);
    expect(errorsOf(video(videoClip({ filters: Array(11).fill("blur") })))).toEqual([
      `${CLIP0}.filters: must have at most 10 items`,
    ]);
    expect(errorsOf(video(videoClip({ filters: "blur" })))).toEqual([`${CLIP0}.filters: must be an array`]);
  });
});

describe("docs/timelines.md version 1.1 › freeze", () => {
  it("lengthens the clip and the timeline by its duration", () => {
    const result = validateEdl(video(videoClip({ in: 2, out: 6, freeze: { at: 3, duration: 2.5 } })), "free");
    expect(result.errors).toEqual([]);
    expect(result.stats.duration).toBe(6.5);
  });

  it("holds a frame between in and out, for more than 0 and at most 3600 s", () => {
    expect(errorsOf(video(videoClip({ in: 2, out: 6, freeze: { at: 7, duration: 1 } })))).toEqual([
      `${CLIP0}.freeze.at: must be between in and out, 2 and 6`,
    ]);
    expect(errorsOf(video(videoClip({ freeze: { at: 1, duration: 3601 } })))).toEqual([
      `${CLIP0}.freeze.duration: must be greater than 0 and at most 3600`,
    ]);
    expect(errorsOf(video(videoClip({ freeze: { duration: 1 } })))).toEqual([`${CLIP0}.freeze.at: is required`]);
  });
});

describe("docs/timelines.md version 1.1 › the caption track", () => {
  it("inline cues take the text style, at the bottom on a box by default", () => {
    const result = validateEdl(captions({ id: "c", cues: [{ start: 0, end: 2, text: "One\nTwo" }] }), "free");
    expect(result.errors).toEqual([]);
    expect(result.edl?.timeline.tracks[1]).toEqual({
      type: "caption",
      clips: [
        {
          id: "c",
          startTime: 0,
          cues: [{ start: 0, end: 2, text: "One\nTwo" }],
          fontSize: 48,
          fontColor: "#FFFFFF",
          fontFamily: "Arial",
          fontWeight: "normal",
          textAlign: "center",
          position: { x: "center", y: "bottom" },
          background: { color: "#000000", opacity: 0.5, padding: 10 },
        },
      ],
    });
  });

  it("a file is one asset; its cues lengthen nothing, inline cues do", () => {
    const file = validateEdl(captions({ id: "c", src: media("subs.srt"), startTime: 3 }), "free");
    expect(file.errors).toEqual([]);
    expect(file.stats).toMatchObject({ assets: 2, duration: 10 });
    const inline = validateEdl(captions({ id: "c", startTime: 5, cues: [{ start: 0, end: 8, text: "Late" }] }), "free");
    expect(inline.stats.duration).toBe(13);
  });

  it.each([
    [{ id: "c" }, `${CAPTION0}: must have exactly one of src and cues`],
    [
      { id: "c", src: media("a.srt"), cues: [{ start: 0, end: 1, text: "x" }] },
      `${CAPTION0}: must have exactly one of src and cues`,
    ],
    [{ id: "c", cues: [] }, `${CAPTION0}.cues: must hold at least one cue`],
    [{ id: "c", cues: [{ start: 2, end: 1, text: "x" }] }, `${CAPTION0}.cues[0].end: must be greater than start`],
    [{ id: "c", cues: [{ start: 0, end: 1, text: " " }] }, `${CAPTION0}.cues[0].text: must not be empty`],
    [{ id: "c", cues: [{ start: 0, end: 1 }] }, `${CAPTION0}.cues[0].text: is required`],
    [
      {
        id: "c",
        cues: [
          { start: 3, end: 4, text: "b" },
          { start: 1, end: 2, text: "a" },
        ],
      },
      `${CAPTION0}.cues[1].start: must not be before the previous cue's start, 3`,
    ],
    [
      { id: "c", src: "file:///etc/passwd" },
      `${CAPTION0}.src: must be an absolute http or https URL without a user name or password, at a public address`,
    ],
    [{ id: "c", src: media("a.srt"), fontSize: 0 }, `${CAPTION0}.fontSize: must be greater than 0 and at most 1000`],
  ])("%j → %s", (clip, error) => {
    expect(errorsOf(captions(clip))).toEqual([error]);
  });

  it("at most 5000 cues a clip, and inline cue lines count toward the 1000 lines of text", () => {
    const cues = (n: number) => Array.from({ length: n }, (_, i) => ({ start: i, end: i + 0.5, text: "x" }));
    expect(errorsOf(captions({ id: "c", cues: cues(5001) }))).toEqual([
      `${CAPTION0}.cues: must have at most 5000 items`,
    ]);
    expect(errorsOf(captions({ id: "c", cues: cues(1001) }))).toEqual([
      "Too many lines of text: 1001 across the text clips and captions (maximum 1000)",
    ]);
  });
});

describe("docs/timelines.md version 1.1 › honest accounting", () => {
  it("an xfade scores 2 and each effect 1; without them the score is 1.0's", () => {
    const base = { videoClips: 1, overlays: 0, texts: 0, speedChanges: 0, blends: 0, duration: 10 };
    expect(complexityScore({ ...base, xfades: 2, effects: 3 })).toBe(7);
    expect(complexityScore(base)).toBe(0);
  });

  it("a crossfade's overlap is decoded twice, so the estimate counts it twice", () => {
    const output = validateEdl(video(videoClip()), "free").edl!.output;
    const inputs = { output, duration: 9, assets: 1, complexity: "simple" as const };
    expect(estimateSeconds({ ...inputs, overlap: 1 })).toBeCloseTo(estimateSeconds({ ...inputs, duration: 10 }));
  });

  it("four crossfades between five clips: 2 points each, and the timeline is 25 − 4 s", () => {
    const crossfade = { in: { type: "crossfade", duration: 1 } };
    const clips = (transition?: unknown) =>
      Array.from({ length: 5 }, (_, i) => videoClip({ out: 5, startTime: i * 4, ...(i > 0 && { transition }) }));
    const plain = validateEdl(video(...clips()), "enterprise");
    const faded = validateEdl(video(...clips(crossfade)), "enterprise");
    expect(faded.errors).toEqual([]);
    expect(faded.stats.duration).toBe(21);
    expect(faded.stats.complexity).toBe("complex");
    expect(plain.stats.complexity).toBe("moderate");
  });
});

describe("docs/timelines.md version 1.1 › the examples a user pastes", () => {
  const blocks = [...readFileSync("docs/timelines.md", "utf8").matchAll(/```json\n([\s\S]*?)```/g)].map((m) =>
    JSON.parse(m[1]),
  );

  it("the full timeline is valid on Pro, and is the reference's 1.1 example", () => {
    const [timeline] = blocks.filter((b) => b.version === "1.1");
    expect(validateEdl(timeline, "pro")).toMatchObject({ valid: true, stats: { duration: 18, clips: 6 } });
    expect(timeline).toEqual(validateEdlExamples.transitions.value.edl);
  });

  it("the clip with the other properties is valid in a 1.1 timeline", () => {
    const [clip] = blocks.filter((b) => b.id === "detail");
    const result = validateEdl(video(clip), "free");
    expect(result.errors).toEqual([]);
    expect(result.stats.features).toEqual(["crop", "transform", "filters", "freeze"]);
  });
});

describe("docs/timelines.md version 1.1 › what asks for nothing", () => {
  it("an empty transition or filter list leaves the clip without one, and lists no feature", () => {
    const result = validateEdl(video(videoClip({ transition: {}, filters: [] })), "free");
    expect(result.errors).toEqual([]);
    expect(result.stats.features).toEqual([]);
    expect(result.edl!.timeline.tracks[0].clips[0]).not.toHaveProperty("transition");
    expect(result.edl!.timeline.tracks[0].clips[0]).not.toHaveProperty("filters");
  });
});
