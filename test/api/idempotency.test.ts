import type { CreateJobRequest } from "../../client/types";
import { describe, expect, it } from "vitest";
import { bodyOf, expectError, expectStatus } from "../support/api-client";
import { api, newAccount, SOURCE } from "./harness";

const create = (
  key: string,
  idempotencyKey: string,
  body: CreateJobRequest = { inputUrl: SOURCE, preset: "mp4_264_720p" },
) => api(key).createJob(body, { idempotencyKey });

describe("Idempotency-Key on creations (no quota unit taken twice for a retried request)", () => {
  it("a retry with the same key and body replays the first response: one job, one unit", async () => {
    const { apiKey } = await newAccount("free");
    const first = await create(apiKey, "order-42");
    const again = await create(apiKey, "order-42");
    expectStatus(first, 201);
    expectStatus(again, 201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const list = await api(apiKey).listJobs();
    expectStatus(list, 200);
    expect(list.body.pagination.totalCount).toBe(1);
    const next = await create(apiKey, "order-43");
    expectStatus(next, 201);
    expect(next.body.user.remainingJobs).toBe(8);
  });

  it("concurrent retries create exactly one job", async () => {
    const { apiKey } = await newAccount("pro");
    const results = await Promise.all(Array.from({ length: 8 }, () => create(apiKey, "burst")));
    const created = results.filter((r) => r.status === 201);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    expect(bodyOf(await api(apiKey).listJobs(), 200).pagination.totalCount).toBe(1);
  });

  it("the same key with another body is a 409; a failed creation frees the key", async () => {
    const { apiKey } = await newAccount("free");
    await create(apiKey, "k1");
    const other = await create(apiKey, "k1", { inputUrl: SOURCE, preset: "mp4_264_480p" });
    expectError(other, 409, "Conflict");
    const refused = await create(apiKey, "k2", { inputUrl: SOURCE, preset: "hls_abr_264_standard" });
    expectStatus(refused, 403);
    const retried = await create(apiKey, "k2", { inputUrl: SOURCE, preset: "hls_abr_264_standard" });
    expectStatus(retried, 403);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
  });

  it("keys are per account", async () => {
    const a = await newAccount();
    const b = await newAccount();
    const fromA = await create(a.apiKey, "shared");
    const fromB = await create(b.apiKey, "shared");
    expectStatus(fromA, 201);
    expectStatus(fromB, 201);
    expect(fromB.body.id).not.toBe(fromA.body.id);
  });
});
