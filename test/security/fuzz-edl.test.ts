/**
 * Campaign: hostile input on the timeline routes. PUT /edl and POST /edl get valid timelines,
 * timelines with a few fields broken, EDL-shaped junk, arbitrary JSON and broken bodies (the
 * EDL arbitraries of the unit suite, reused), with hostile headers; never a 5xx or a hang, the
 * contract's shapes, and PUT's verdict always matching what POST does with the same timeline.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { BODY_LIMITS } from "../../worker/middleware/body-limit";
import { edlShapedJunk, mutate, pathsOf, type TimelineShape, validEdl } from "../unit/edl/arbitraries";
import { account, seedVictim } from "./accounts";
import { anyBody, type Body, hostileKey, jsonText, objectText, shortHostileString, type JsonText } from "./arbitraries";
import { type Caller, send } from "./client";
import { refusedForgery, requestOf, type Sender, senderOf } from "./senders";
import { edlCreation, edlValidation, expectContractBody, expectContractError } from "./contract";
import { countCase, fuzz } from "./fuzz";

const RUNS = { validate: 800, create: 800, agree: 200 };

/** Inside the Starter limits, so every generated timeline is valid on every plan. */
const WITHIN_STARTER: TimelineShape = { maxVideoClips: 3, maxExtraTracks: 1, maxClipsPerExtraTrack: 2, urls: 5 };

let callers: Caller[];

beforeAll(async () => {
  await seedVictim();
  callers = [await account("free"), await account("pro"), await account("enterprise")];
});

/** JSON text of any JavaScript value the EDL arbitraries make (bigint as a string, as a client would). */
const asJson = (value: unknown): JsonText =>
  JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v)) ?? "null";

const brokenTimeline = validEdl(WITHIN_STARTER).chain((document) =>
  fc
    .array(
      fc.tuple(
        fc.constantFrom(...pathsOf(document)),
        fc.option(fc.oneof(fc.jsonValue(), shortHostileString), { nil: undefined }),
      ),
      { minLength: 1, maxLength: 4 },
    )
    .map((changes) => changes.reduce<unknown>((doc, [path, value]) => mutate(doc, path, value), document)),
);

const edlText: fc.Arbitrary<JsonText> = fc.oneof(
  { arbitrary: validEdl(WITHIN_STARTER).map(asJson), weight: 3 },
  { arbitrary: brokenTimeline.map(asJson), weight: 3 },
  { arbitrary: edlShapedJunk.map(asJson), weight: 3 },
  { arbitrary: jsonText, weight: 1 },
);

const metadataText: fc.Arbitrary<JsonText> = fc.oneof(
  objectText(
    fc.array(
      fc.tuple(
        fc.oneof(fc.constantFrom("name", "description"), hostileKey),
        fc.oneof(
          jsonText,
          shortHostileString.map((s) => JSON.stringify(s)),
        ),
      ),
      { maxLength: 4 },
    ),
  ),
  jsonText,
);

/** The envelope: `edl` (maybe missing), `metadata`, extra and repeated keys, in any order. */
const envelope: fc.Arbitrary<JsonText> = objectText(
  fc
    .tuple(
      fc.option(edlText, { freq: 10, nil: undefined }),
      fc.option(metadataText, { freq: 3, nil: undefined }),
      fc.array(fc.tuple(hostileKey, jsonText), { maxLength: 2 }),
    )
    .chain(([edl, metadata, extra]) => {
      const entries: [string, JsonText][] = [
        ...(edl === undefined ? [] : [["edl", edl] as [string, JsonText]]),
        ...(metadata === undefined ? [] : [["metadata", metadata] as [string, JsonText]]),
        ...extra,
      ];
      return fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length });
    }),
);

const sender = senderOf(15);

const request = (who: Sender, method: string, body: Body) => requestOf(callers, who, method, "/edl", body);

describe("campaign: hostile input on the timeline routes", () => {
  const routes = [
    {
      method: "PUT",
      runs: RUNS.validate,
      expected: "200 with the contract's verdict",
      success: 200,
      body: edlValidation,
      errors: ["Invalid JSON", "Validation error"] as const,
    },
    {
      method: "POST",
      runs: RUNS.create,
      expected: "201 with the contract's job",
      success: 201,
      body: edlCreation,
      errors: [
        "Invalid JSON",
        "Validation error",
        "EDL validation failed",
        "Usage limit exceeded",
        "Conflict",
      ] as const,
    },
  ];
  for (const route of routes) {
    it(`${route.method} /edl: any body and headers → ${route.expected}, or the contract's error`, async () => {
      await fuzz(
        fc.tuple(sender, anyBody(envelope, BODY_LIMITS.timeline)),
        async ([who, body]) => {
          countCase(`${route.method} /edl`);
          const res = await send(request(who, route.method, body));
          if (refusedForgery(who, res)) return;
          if (res.status === route.success) expectContractBody(route.body, res, route.success);
          else expectContractError(res, { allowed: [...route.errors] });
        },
        { runs: route.runs },
      );
    });
  }

  it("PUT's verdict and POST's outcome agree for the same timeline: valid ⇔ 201, errors ⇔ 400 with the same errors", async () => {
    // Paid callers with no Idempotency-Key, so quota and replays stay out of it.
    const plain = sender.map(({ headers: { "Idempotency-Key": _, ...headers }, ...who }) => ({
      ...who,
      headers,
      caller: 1 + (who.caller % 2),
      authorization: undefined,
    }));
    const timeline = fc
      .oneof(validEdl(WITHIN_STARTER), brokenTimeline, edlShapedJunk)
      .map((edl) => `{"edl":${asJson(edl)}}`);
    await fuzz(
      fc.tuple(plain, timeline),
      async ([who, body]) => {
        countCase("PUT /edl");
        countCase("POST /edl");
        const verdict = await send(request(who, "PUT", body));
        expectContractBody(edlValidation, verdict);
        const created = await send(request(who, "POST", body));
        const { valid, errors } = verdict.body as { valid: boolean; errors?: string[] };
        if (valid) {
          expectContractBody(edlCreation, created, 201);
        } else {
          expectContractError(created, { allowed: ["EDL validation failed"] });
          expect((created.body as { errors: string[] }).errors).toEqual(errors);
        }
      },
      { runs: RUNS.agree },
    );
  });

  it("generated valid timelines are valid on every plan, as the unit properties say of the validator", async () => {
    await fuzz(
      fc.tuple(fc.nat(), validEdl(WITHIN_STARTER)),
      async ([caller, edl]) => {
        countCase("PUT /edl");
        const res = await send({
          method: "PUT",
          path: "/edl",
          caller: callers[caller % callers.length],
          body: `{"edl":${asJson(edl)}}`,
        });
        expectContractBody(edlValidation, res);
        expect(res.body).toMatchObject({ valid: true, plan: { canProcess: true } });
      },
      { runs: RUNS.agree },
    );
  });
});
