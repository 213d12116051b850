import { describe, expect, it } from "vitest";
import { validateEdl } from "../../../domain/edl/validate";
import { inPointErrors, planAssets, planFonts } from "../../../encoder/timeline/assets";

const A = "https://media.example.com/a.mp4";
const B = "https://media.example.com/b.mp4";
const TONE = "https://media.example.com/tone.m4a";
const LOGO = "https://media.example.com/logo.png";

function edl(tracks: unknown[]) {
  const result = validateEdl({ version: "1.0", timeline: { tracks } }, "enterprise");
  expect(result.errors).toEqual([]);
  return result.edl!;
}

describe("planFonts: each family and weight once, however many text clips use it", () => {
  it("three captions in two fonts need two lookups", () => {
    const caption = (id: string, extra: Record<string, unknown> = {}) => ({
      id,
      text: id,
      startTime: 0,
      duration: 1,
      ...extra,
    });
    const fonts = planFonts(
      edl([
        { type: "video", clips: [{ id: "v", src: A, in: 0, out: 1, startTime: 0 }] },
        { type: "text", clips: [caption("t1"), caption("t2", { fontWeight: "bold" })] },
        { type: "text", clips: [caption("t3")] },
      ]),
    );
    expect(fonts).toEqual([
      { fontFamily: "Arial", fontWeight: "normal" },
      { fontFamily: "Arial", fontWeight: "bold" },
    ]);
  });
});

describe("planAssets: each distinct URL once, with what it is used as", () => {
  it("a URL used as a clip's source and as an overlay is one asset with both uses", () => {
    const plan = planAssets(
      edl([
        {
          type: "video",
          clips: [
            { id: "v1", src: A, in: 0, out: 1, startTime: 0 },
            { id: "v2", src: A, in: 1, out: 2, startTime: 1 },
          ],
        },
        {
          type: "overlay",
          clips: [
            { id: "o1", src: A, startTime: 0, duration: 1 },
            { id: "o2", src: LOGO, startTime: 0, duration: 1 },
          ],
        },
      ]),
    );
    expect(plan).toEqual([
      {
        url: A,
        uses: [
          { as: "media", clipId: "v1" },
          { as: "image", clipId: "o1" },
        ],
      },
      { url: LOGO, uses: [{ as: "image", clipId: "o2" }] },
    ]);
  });

  it("a muted clip's replaceAudio is not fetched; an unmuted one's is", () => {
    const plan = planAssets(
      edl([
        {
          type: "video",
          clips: [
            { id: "muted", src: A, in: 0, out: 1, startTime: 0, mute: true, replaceAudio: TONE },
            { id: "dubbed", src: B, in: 0, out: 1, startTime: 1, replaceAudio: TONE },
          ],
        },
      ]),
    );
    expect(plan.map((n) => n.url)).toEqual([A, B, TONE]);
    expect(plan[2].uses).toEqual([{ as: "media", clipId: "dubbed" }]);
    expect(
      planAssets(
        edl([
          { type: "video", clips: [{ id: "m", src: A, in: 0, out: 1, startTime: 0, mute: true, replaceAudio: TONE }] },
        ]),
      ).map((n) => n.url),
    ).toEqual([A]);
  });
});

describe("inPointErrors: an in-point at or past the end of the probed source", () => {
  const timeline = edl([
    {
      type: "video",
      clips: [
        { id: "ok", src: A, in: 9.5, out: 12, startTime: 0 },
        { id: "at-end", src: A, in: 10, out: 11, startTime: 3 },
        { id: "past", src: B, in: 7.25, out: 8, startTime: 5 },
      ],
    },
  ]);

  it("names each such clip with its in-point and the source's duration", () => {
    expect(
      inPointErrors(
        timeline,
        new Map([
          [A, 10],
          [B, 4.0416],
        ]),
      ),
    ).toEqual([
      'Clip "at-end" starts at 10 s into its source, but the source is only 10 s long',
      'Clip "past" starts at 7.25 s into its source, but the source is only 4.0416 s long',
    ]);
  });

  it("nothing when every in-point is inside its source", () => {
    expect(
      inPointErrors(
        timeline,
        new Map([
          [A, 10.5],
          [B, 8],
        ]),
      ),
    ).toEqual([]);
  });
});
