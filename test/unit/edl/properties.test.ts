import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { COMPLEXITY_LEVELS } from "../../../domain/edl/complexity";
import { clipEnd } from "../../../domain/edl/validated-edl";
import { type EdlValidation, validateEdl } from "../../../domain/edl/validate";
import { PLAN_IDS, type PlanId } from "../../../domain/plans";
import { edlShapedJunk, junk, mutate, pathsOf, type TimelineShape, validEdl } from "./arbitraries";

const plan = fc.constantFrom(...PLAN_IDS);

/** What holds for every result, valid or not. */
function expectWellFormed(result: EdlValidation) {
  expect(result.valid).toBe(result.errors.length === 0);
  expect(result.edl !== undefined).toBe(result.valid);
  expect(result.errors.every((e) => typeof e === "string" && e.length > 0)).toBe(true);
  expect(result.warnings.every((w) => typeof w === "string" && w.length > 0)).toBe(true);
  const { clips, duration, tracks, assets } = result.stats;
  for (const n of [clips, duration, tracks, assets]) expect(Number.isFinite(n) && n >= 0).toBe(true);
  expect(COMPLEXITY_LEVELS).toContain(result.stats.complexity);
  expect(result.estimate.complexity).toBe(result.stats.complexity);
  expect(result.estimate.processingTime).toMatch(/^(under 1 minute|\d+-\d+ (minutes|hours))$/);
}

/** Never throws, and the result is well formed. */
function check(input: unknown, planId: PlanId) {
  expectWellFormed(validateEdl(input, planId));
}

describe("property: validateEdl never throws and errors is empty iff valid", () => {
  it("on arbitrary JSON", () => {
    fc.assert(fc.property(fc.jsonValue(), plan, check), { numRuns: 500 });
  });

  it("on arbitrary JavaScript values, beyond JSON", () => {
    fc.assert(fc.property(junk, plan, check), { numRuns: 300 });
  });

  it("on objects shaped like an EDL with junk in the fields", () => {
    fc.assert(fc.property(edlShapedJunk, plan, check), { numRuns: 1000 });
  });

  it("on valid EDLs with a few fields replaced by junk or removed", () => {
    const mutated = validEdl({ maxVideoClips: 4, maxExtraTracks: 2, maxClipsPerExtraTrack: 3, urls: 4 }).chain(
      (document) => {
        const paths = pathsOf(document);
        const change = fc.tuple(
          fc.constantFrom(...paths),
          fc.option(fc.oneof(junk, fc.jsonValue()), { nil: undefined }),
        );
        return fc
          .array(change, { minLength: 1, maxLength: 4 })
          .map((changes) => changes.reduce<unknown>((doc, [path, value]) => mutate(doc, path, value), document));
      },
    );
    fc.assert(fc.property(mutated, plan, check), { numRuns: 500 });
  });
});

/** Everything a valid generated EDL must report about itself. */
function expectAccepted(document: Record<string, unknown>, planId: PlanId) {
  const result = validateEdl(document, planId);
  expect(result.errors).toEqual([]);
  expect(result.valid).toBe(true);
  expectWellFormed(result);

  const tracks = (document.timeline as { tracks: { clips: Record<string, unknown>[] }[] }).tracks;
  const clips = tracks.flatMap((t) => t.clips);
  expect(result.stats.clips).toBe(clips.length);
  expect(result.stats.tracks).toBe(tracks.length);
  const urls = clips.flatMap((c) => [c.src, c.replaceAudio].filter((u) => typeof u === "string"));
  expect(result.stats.assets).toBe(new Set(urls).size);

  const validated = result.edl!.timeline.tracks;
  expect(validated.map((t) => t.clips.map((c) => c.id))).toEqual(tracks.map((t) => t.clips.map((c) => c.id)));
  const end = Math.max(...validated.flatMap((t) => t.clips.map(clipEnd)));
  expect(result.stats.duration).toBe(Math.round(end * 1000) / 1000);
}

describe("property: generated valid timelines always validate", () => {
  const withinStarter: TimelineShape = { maxVideoClips: 3, maxExtraTracks: 1, maxClipsPerExtraTrack: 2, urls: 5 };
  const large: TimelineShape = { maxVideoClips: 15, maxExtraTracks: 6, maxClipsPerExtraTrack: 6, urls: 12 };

  it("within the Starter limits, on every plan, with stats.clips equal to the clip count", () => {
    fc.assert(fc.property(validEdl(withinStarter), plan, expectAccepted), { numRuns: 500 });
  });

  it("larger timelines on Enterprise", () => {
    fc.assert(
      fc.property(validEdl(large), (document) => expectAccepted(document, "enterprise")),
      { numRuns: 200 },
    );
  });
});
