/**
 * The body limits as the deployed Worker applies them, inside workerd with no dev server in
 * front: the body is a stream that counts what the app pulls from it, so "413 before it is read
 * whole" is measured, not inferred. (Over the wire, the local runner drains every unread body
 * before it answers; see test/security/body-limits.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { BODY_LIMITS } from "../../worker/middleware/body-limit";
import { expectStatus } from "../support/api-client";
import { appClient } from "./app-client";

/** workerd's own: a stream whose readable side has a known length. */
declare const FixedLengthStream: new (length: number) => TransformStream<Uint8Array, Uint8Array>;

const CHUNK = 64 * 1024;

/** A body that never ends, and how many bytes of it were pulled. */
function endlessBody() {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulled += CHUNK;
        controller.enqueue(new Uint8Array(CHUNK).fill(0x20));
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

/** No bindings: the limit is applied before anything needs one. */
const send = (path: string, body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
  appClient({}).raw<{ error: string; message: string }>({
    method: "POST",
    path,
    body,
    headers: { "Content-Type": "application/json", ...headers },
  });

const ROUTES: [string, number][] = [
  ["/api/v1/jobs", BODY_LIMITS.job],
  ["/api/v1/edl", BODY_LIMITS.timeline],
  ["/internal/jobs/00000000-0000-4000-8000-000000000000/fail", BODY_LIMITS.internal],
];

describe("inside workerd: request bodies over the limit", () => {
  for (const [path, limit] of ROUTES) {
    it(`${path}: a body without end is read only until it passes ${limit} bytes, then 413`, async () => {
      const body = endlessBody();
      const res = await send(path, body.stream);
      expectStatus(res, 413);
      expect(res.body).toEqual({ error: "Payload too large", message: expect.stringContaining("larger than") });
      expect(body.pulled()).toBeGreaterThan(limit);
      expect(body.pulled()).toBeLessThanOrEqual(limit + 2 * CHUNK);
    });

    it(`${path}: a declared length over the limit is 413 without a byte of the body read`, async () => {
      // Nothing is ever written: had the app waited for the body, no answer would come.
      const declared = new FixedLengthStream(limit + 1);
      const res = await send(path, declared.readable, { "Content-Length": String(limit + 1) });
      expectStatus(res, 413);
      expect(res.body.error).toBe("Payload too large");
    });
  }
});
