/**
 * Campaign: the internal API under attack. Outside /api/v1, but on the same host: unsigned or
 * forged calls are refused whatever they carry, and even a signed caller (a confused encoder)
 * sending junk gets a 4xx in the common error shape, never a 5xx.
 */
import fc from "fast-check";
import { getPath } from "hono/utils/url";
import { beforeAll, describe, expect, it } from "vitest";
import {
  INTERNAL_NONCE_HEADER,
  INTERNAL_SIGNATURE_HEADER,
  INTERNAL_TIMESTAMP_HEADER,
  signInternal,
} from "../../domain/internal-auth";
import { BODY_LIMITS } from "../../worker/middleware/body-limit";
import { bodyOf } from "../support/api-client";
import { account, seedVictim } from "./accounts";
import { anyBody, headerValue, jsonText, objectText, pathId, type Body } from "./arbitraries";
import { clientAs, type Incoming, send, stack } from "./client";
import { countCase, fuzz } from "./fuzz";

const RUNS = { forged: 300, signed: 300 };
const PART_ACTIONS = ["claim", "heartbeat", "complete", "fail"].flatMap((action) =>
  ["0", "1", "199", "200", "-1", "x"].map((index) => `parts/${index}/${action}`),
);
/** The job's routes, and a split job's (docs/scaling.md): its split, its parts', its join's claim. */
const ACTIONS = ["claim", "heartbeat", "complete", "fail", "split", "join/claim", ...PART_ACTIONS];

let ownIds: string[];

beforeAll(async () => {
  await seedVictim();
  const caller = await account("enterprise");
  ownIds = [];
  for (let i = 0; i < 3; i++) {
    ownIds.push(
      bodyOf(
        await clientAs(caller).createJob({ inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" }),
        201,
      ).id,
    );
  }
});

const QSTASH_PATHS = ["/internal/webhook-deliveries", "/internal/dispatch-failures"];

/** The encoder's routes, and the QStash-signed ones. */
const internalPath = (ids: string[]) =>
  fc.oneof(
    {
      arbitrary: fc
        .tuple(pathId(ids), fc.constantFrom(...ACTIONS))
        .map(([id, action]) => `/internal/jobs/${id}/${action}`),
      weight: 6,
    },
    { arbitrary: fc.constant("/internal/sweep"), weight: 1 },
    { arbitrary: fc.constantFrom(...QSTASH_PATHS), weight: 1 },
  );

/** A body in the encoder's vocabulary with any values, or anything at all. */
const encoderBody: fc.Arbitrary<Body> = anyBody(
  objectText(
    fc.array(
      fc.tuple(
        fc.constantFrom(
          "attempt",
          "progress",
          "outputKey",
          "duration",
          "errorMessage",
          "final",
          "claim",
          "dispatch",
          "plan",
          "retryable",
        ),
        jsonText,
      ),
      { maxLength: 5 },
    ),
  ),
  BODY_LIMITS.internal,
);

/** An error in the common shape: `{error, message}` strings, and a 4xx status. */
function expectErrorShape(res: Incoming) {
  expect(res.status, res.text.slice(0, 500)).toBeGreaterThanOrEqual(400);
  expect(res.status, res.text.slice(0, 500)).toBeLessThan(500);
  const body = res.body as { error?: unknown; message?: unknown };
  expect(typeof body?.error, res.text.slice(0, 500)).toBe("string");
  expect(typeof body?.message, res.text.slice(0, 500)).toBe("string");
}

/**
 * The path the Worker's router matches for a request-target, which is what a signature covers:
 * dot segments resolved by the URL parser, then percent-escapes decoded as Hono decodes them.
 */
const routerPath = (target: string) => getPath(new Request(new URL(target, "http://worker.test")));

/** A route the HTTP layer normalised onto no route at all (`/jobs/../claim`). */
const noRoute = (res: Incoming) =>
  res.status === 404 && String((res.body as { message?: unknown })?.message).startsWith("No route for ");

describe("campaign: the internal API", () => {
  it("unsigned, forged, stale or replayed-elsewhere signatures → 401, whatever the body", async () => {
    const forgery = fc.oneof(
      fc.constant({}),
      fc.record(
        {
          [INTERNAL_TIMESTAMP_HEADER]: headerValue,
          [INTERNAL_NONCE_HEADER]: headerValue,
          [INTERNAL_SIGNATURE_HEADER]: headerValue,
        },
        { requiredKeys: [] },
      ),
      fc.constant("stale" as const),
      fc.constant("other body" as const),
      // Signed for another route, another job's, or another method: a captured call pointed elsewhere.
      fc.tuple(internalPath([]), fc.constantFrom("POST", "PUT")).map(([path, method]) => ({ path, method })),
      fc.record({ "Upstash-Signature": headerValue }),
    );
    await fuzz(
      fc.tuple(internalPath([]), encoderBody, forgery),
      async ([path, body, forged]) => {
        countCase("POST /internal/*");
        const text = Buffer.isBuffer(body) ? body.toString("utf8") : body;
        const call = { method: "POST", path: routerPath(path), body: text };
        const elsewhere = typeof forged === "object" && "method" in forged ? forged : undefined;
        // Signed for this very call, the forgery would not be one.
        if (elsewhere && elsewhere.method === "POST" && routerPath(elsewhere.path) === call.path) return;
        const headers =
          forged === "stale"
            ? await signInternal(stack.internalSecret, call, Date.now() - 10 * 60 * 1000)
            : forged === "other body"
              ? await signInternal(stack.internalSecret, { ...call, body: `${text} ` })
              : elsewhere
                ? await signInternal(stack.internalSecret, { ...call, ...elsewhere, path: routerPath(elsewhere.path) })
                : forged;
        const res = await send({
          method: "POST",
          path,
          headers: { "Content-Type": "application/json", ...headers },
          body,
        });
        if (noRoute(res)) return expectErrorShape(res);
        expect(res.status, res.text).toBe(401);
        expectErrorShape(res);
      },
      { runs: RUNS.forged },
    );
  });

  it("signed junk (a confused encoder) → a 4xx in the common shape or a 200, never a 5xx", async () => {
    await fuzz(
      fc.tuple(
        internalPath(ownIds).filter((p) => !QSTASH_PATHS.includes(p)),
        encoderBody,
      ),
      async ([path, body]) => {
        countCase("POST /internal/*");
        const signed = await signInternal(stack.internalSecret, {
          method: "POST",
          path: routerPath(path),
          body: Buffer.isBuffer(body) ? new TextDecoder().decode(body) : Buffer.from(body, "utf8").toString("utf8"),
        });
        const res = await send({
          method: "POST",
          path,
          headers: { "Content-Type": "application/json", ...signed },
          body,
        });
        if (res.status === 200) return;
        expectErrorShape(res);
      },
      { runs: RUNS.signed },
    );
  });
});
