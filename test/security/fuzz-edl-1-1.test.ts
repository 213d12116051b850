/**
 * Campaign: version 1.1's fields (docs/timelines.md#version-11) through PUT /edl. Valid 1.1
 * timelines get junk in one to three spots, mostly in the new fields (transition, crop,
 * transform, filters, freeze, a caption clip's cues, src and style), added where a clip had none
 * or put in place of what it had: never a 5xx, always the contract's verdict, and every error
 * names the path it is about. POST /edl agrees with PUT on the same timelines.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { mutate, pathsOf, type TimelineShape } from "../unit/edl/arbitraries";
import { newFieldJunk, validEdl11 } from "../unit/edl/arbitraries-1-1";
import { account } from "./accounts";
import { type Caller, send } from "./client";
import { edlCreation, edlValidation, expectContractBody, expectContractError } from "./contract";
import { countCase, fuzz } from "./fuzz";

const RUNS = { validate: 600, agree: 150 };
const WITHIN_STARTER: TimelineShape = { maxVideoClips: 3, maxExtraTracks: 1, maxClipsPerExtraTrack: 2, urls: 5 };
const NEW_FIELDS = ["transition", "crop", "transform", "filters", "freeze", "cues", "src", "startTime", "background"];
/** A field path as the errors print it, or one of the rules that name none (plan limits, sizes). */
const NAMES_A_PATH = /^(version|output|timeline)(\.[A-Za-z]+|\[\d+\])*: |^(Too many|Timeline too)/;

let callers: Caller[];

beforeAll(async () => {
  callers = [await account("free"), await account("pro"), await account("enterprise")];
});

/** Where junk goes: every spot of the document, and each new field of each clip, given or not. */
function spotsOf(document: Record<string, unknown>): (string | number)[][] {
  const tracks = (document.timeline as { tracks: { clips: unknown[] }[] }).tracks;
  const fields = tracks.flatMap((track, i) =>
    track.clips.flatMap((_, j) => NEW_FIELDS.map((field) => ["timeline", "tracks", i, "clips", j, field])),
  );
  const inside = pathsOf(document).filter((path) => path.some((key) => NEW_FIELDS.includes(String(key))));
  return [...fields, ...inside, ...pathsOf(document)];
}

const brokenTimeline = validEdl11(WITHIN_STARTER).chain((document) =>
  fc
    .array(fc.tuple(fc.constantFrom(...spotsOf(document)), fc.option(newFieldJunk, { freq: 8, nil: undefined })), {
      minLength: 1,
      maxLength: 3,
    })
    .map((changes) => changes.reduce<unknown>((doc, [path, value]) => mutate(doc, path, value), document)),
);

/** JSON text of the value, bigint as a string as a client would send it. */
const bodyOf = (edl: unknown) =>
  `{"edl":${JSON.stringify(edl, (_, v) => (typeof v === "bigint" ? v.toString() : v)) ?? "null"}}`;

describe("campaign: version 1.1's fields through PUT /edl", () => {
  it("PUT /edl: never a 5xx, the contract's verdict, and every error names its path", async () => {
    await fuzz(
      fc.tuple(
        fc.nat(),
        fc.oneof({ arbitrary: brokenTimeline, weight: 4 }, { arbitrary: validEdl11(WITHIN_STARTER), weight: 1 }),
      ),
      async ([caller, edl]) => {
        countCase("PUT /edl (1.1)");
        const res = await send({
          method: "PUT",
          path: "/edl",
          caller: callers[caller % callers.length],
          body: bodyOf(edl),
        });
        expectContractBody(edlValidation, res);
        for (const error of (res.body as { errors?: string[] }).errors ?? []) expect(error).toMatch(NAMES_A_PATH);
      },
      { runs: RUNS.validate },
    );
  });

  it("POST /edl refuses exactly what PUT finds invalid, with the same errors", async () => {
    await fuzz(
      fc.tuple(fc.nat(), brokenTimeline),
      async ([caller, edl]) => {
        countCase("PUT /edl (1.1)");
        countCase("POST /edl (1.1)");
        // Paid callers: the quota stays out of it.
        const who = callers[1 + (caller % 2)];
        const verdict = await send({ method: "PUT", path: "/edl", caller: who, body: bodyOf(edl) });
        expectContractBody(edlValidation, verdict);
        const created = await send({ method: "POST", path: "/edl", caller: who, body: bodyOf(edl) });
        const { valid, errors } = verdict.body as { valid: boolean; errors?: string[] };
        if (valid) expectContractBody(edlCreation, created, 201);
        else {
          expectContractError(created, { allowed: ["EDL validation failed"] });
          expect((created.body as { errors: string[] }).errors).toEqual(errors);
        }
      },
      { runs: RUNS.agree },
    );
  });
});
