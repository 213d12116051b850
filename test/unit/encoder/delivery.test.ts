import { describe, expect, it } from "vitest";
import { parseDelivery } from "../../../encoder/server";

const jobId = "5b0f3c1e-8d2a-4c1b-9e7f-0a1b2c3d4e5f";

describe("a QStash delivery → the job and its attempt", () => {
  it("counts QStash's redeliveries from the message's first attempt", () => {
    expect(parseDelivery(JSON.stringify({ jobId }), undefined)).toEqual({ jobId, attempt: 0 });
    expect(parseDelivery(JSON.stringify({ jobId, firstAttempt: 0 }), "2")).toEqual({ jobId, attempt: 2 });
    // A job the sweep dispatched again after one lost attempt.
    expect(parseDelivery(JSON.stringify({ jobId, firstAttempt: 1 }), "0")).toEqual({ jobId, attempt: 1 });
    expect(parseDelivery(JSON.stringify({ jobId, firstAttempt: 1 }), "1")).toEqual({ jobId, attempt: 2 });
  });

  it("refuses bodies that can never be processed", () => {
    for (const raw of ["", "{", "[]", JSON.stringify({ jobId: "nope" }), JSON.stringify({ jobId, firstAttempt: -1 })]) {
      expect(parseDelivery(raw, undefined), raw).toBeNull();
    }
  });
});
