import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { timelineEnd } from "../../../domain/edl/validated-edl";
import { validateEdl } from "../../../domain/edl/validate";
import { PLAN_IDS } from "../../../domain/plans";
import { mutate, pathsOf, type TimelineShape } from "./arbitraries";
import { newFieldJunk, validEdl11 } from "./arbitraries-1-1";

const WITHIN_STARTER: TimelineShape = { maxVideoClips: 3, maxExtraTracks: 1, maxClipsPerExtraTrack: 2, urls: 5 };
const LARGER: TimelineShape = { maxVideoClips: 6, maxExtraTracks: 4, maxClipsPerExtraTrack: 4, urls: 8 };

/** A field path as the errors print it, or one of the rules that name none (plan limits, sizes). */
const NAMES_A_PATH = /^(version|output|timeline)(\.[A-Za-z]+|\[\d+\])*: |^(Too many|Timeline too)/;

describe("property: version 1.1 (docs/timelines.md, version 1.1)", () => {
  it("generated valid 1.1 timelines validate on every plan, length the latest clip end", () => {
    fc.assert(
      fc.property(validEdl11(WITHIN_STARTER), fc.constantFrom(...PLAN_IDS), (document, plan) => {
        const result = validateEdl(document, plan);
        expect(result.errors).toEqual([]);
        expect(result.warnings.filter((w) => w.includes("(video) has overlapping"))).toEqual([]);
        const end = timelineEnd(result.edl!.timeline.tracks);
        expect(result.stats.duration).toBe(Math.round(end * 1000) / 1000);
      }),
      { numRuns: 300 },
    );
  });

  it("larger ones on Enterprise", () => {
    fc.assert(
      fc.property(validEdl11(LARGER), (document) => {
        expect(validateEdl(document, "enterprise").errors).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it("junk in any spot never throws, errors is empty iff valid, and every error names its path", () => {
    const mutated = validEdl11(LARGER).chain((document) =>
      fc
        .array(fc.tuple(fc.constantFrom(...pathsOf(document)), fc.option(newFieldJunk, { nil: undefined })), {
          minLength: 1,
          maxLength: 3,
        })
        .map((changes) => changes.reduce<unknown>((doc, [path, value]) => mutate(doc, path, value), document)),
    );
    fc.assert(
      fc.property(mutated, fc.constantFrom(...PLAN_IDS), (document, plan) => {
        const result = validateEdl(document, plan);
        expect(result.valid).toBe(result.errors.length === 0);
        for (const error of result.errors) expect(error).toMatch(NAMES_A_PATH);
      }),
      { numRuns: 500 },
    );
  });
});
