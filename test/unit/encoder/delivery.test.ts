import { describe, expect, it } from "vitest";
import { parseDelivery } from "../../../encoder/server";

const jobId = "5b0f3c1e-8d2a-4c1b-9e7f-0a1b2c3d4e5f";

describe("a QStash delivery → the job and its dispatch", () => {
  it("reads the job and the dispatch from the signed body alone", () => {
    expect(parseDelivery(JSON.stringify({ jobId, dispatch: 0 }))).toEqual({ jobId, dispatch: 0 });
    expect(parseDelivery(JSON.stringify({ jobId, dispatch: 3, extra: true }))).toEqual({ jobId, dispatch: 3 });
  });

  it("reads a split job's part or its join (docs/scaling.md)", () => {
    expect(parseDelivery(JSON.stringify({ jobId, dispatch: 1, part: 4 }))).toEqual({ jobId, dispatch: 1, part: 4 });
    expect(parseDelivery(JSON.stringify({ jobId, dispatch: 2, join: true }))).toEqual({
      jobId,
      dispatch: 2,
      join: true,
    });
  });

  it("refuses bodies that can never be processed", () => {
    for (const raw of [
      "",
      "{",
      "[]",
      JSON.stringify({ jobId: "nope", dispatch: 0 }),
      JSON.stringify({ jobId }),
      JSON.stringify({ jobId, dispatch: -1 }),
      JSON.stringify({ jobId, dispatch: 1.5 }),
      JSON.stringify({ jobId, dispatch: 0, part: -1 }),
      JSON.stringify({ jobId, dispatch: 0, part: "1" }),
      JSON.stringify({ jobId, dispatch: 0, join: false }),
      JSON.stringify({ jobId, dispatch: 0, part: 1, join: true }),
    ]) {
      expect(parseDelivery(raw), raw).toBeNull();
    }
  });
});
