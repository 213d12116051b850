/**
 * Defects the fuzzing campaign found, each pinned by the smallest request that showed it (the
 * oversized and deeply nested bodies it found are pinned in body-limits.test.ts).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { signInternal } from "../../domain/internal-auth";
import { account } from "./accounts";
import { type Caller, send, stack } from "./client";
import { creationResponse, edlCreation, expectContractBody, jobRead } from "./contract";

let caller: Caller;

beforeAll(async () => {
  caller = await account("enterprise");
});

async function clientMetadataOf(id: string) {
  const read = await send({ method: "GET", path: `/jobs/${id}`, caller });
  expectContractBody(jobRead, read);
  return (read.body as { clientMetadata: unknown }).clientMetadata;
}

describe("found: a `__proto__` key in caller metadata was silently dropped", () => {
  // zod's record rebuilt the object key by key, and assigning `__proto__` sets a prototype.
  const metadata = '{"__proto__":{"x":1},"constructor":"c","kept":true}';
  const expected = JSON.parse(metadata);

  it("POST /jobs stores it and reads it back", async () => {
    const res = await send({
      method: "POST",
      path: "/jobs",
      caller,
      body: `{"inputUrl":"https://media.example.com/a.mp4","preset":"mp4_264_720p","metadata":${metadata}}`,
    });
    expectContractBody(creationResponse, res, 201);
    expect(await clientMetadataOf((res.body as { id: string }).id)).toEqual(expected);
  });

  it("POST /edl stores it and reads it back", async () => {
    const edl = {
      version: "1.0",
      timeline: {
        tracks: [
          { type: "video", clips: [{ id: "a", src: "https://media.example.com/a.mp4", in: 0, out: 1, startTime: 0 }] },
        ],
      },
    };
    const res = await send({
      method: "POST",
      path: "/edl",
      caller,
      body: `{"edl":${JSON.stringify(edl)},"metadata":${metadata}}`,
    });
    expectContractBody(edlCreation, res, 201);
    expect(await clientMetadataOf((res.body as { id: string }).id)).toEqual(expected);
  });
});

describe("found: a signed internal call with a job id that is not a UUID was a 500", () => {
  for (const action of ["claim", "heartbeat", "complete", "fail"]) {
    it(`POST /internal/jobs/not-a-uuid/${action} → 404`, async () => {
      const body = JSON.stringify({
        dispatch: 0,
        claim: 1,
        outputKey: "x",
        duration: 1,
        errorMessage: "x",
        retryable: false,
      });
      const res = await send({
        method: "POST",
        path: `/internal/jobs/not-a-uuid/${action}`,
        headers: await signInternal(stack.internalSecret, {
          method: "POST",
          path: `/internal/jobs/not-a-uuid/${action}`,
          body,
        }),
        body,
      });
      expect(res.status, res.text).toBe(404);
      expect(res.body).toEqual({ error: "Not found", message: "Job not found" });
    });
  }
});
