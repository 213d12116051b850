import { describe, expect, it, vi } from "vitest";
import { expectStatus } from "../support/api-client";
import { api, completeJob, createJob, failEveryAttempt, ISO_MS, newAccount, readJob, SOURCE } from "./harness";

/** When a presigned link was signed, in whole seconds (its X-Amz-Date, `20250101T120000Z`). */
function signedAtSeconds(url: string): number {
  const date = new URL(url).searchParams.get("X-Amz-Date")!;
  return Date.parse(date.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z")) / 1000;
}

describe("contract §5.2 GET /jobs/{id} › full read", () => {
  it("a queued job: every field, nulls where absent, links self and cancel only", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const res = await api(apiKey).getJob(job.id);
    expectStatus(res, 200);
    expect(res.body).toMatchObject({
      id: job.id,
      status: "queued",
      preset: "mp4_264_720p",
      inputUrl: SOURCE,
      outputUrl: null,
      expiration: null,
      duration: null,
      errorMessage: null,
      retryCount: 0,
      links: { self: `/api/v1/jobs/${job.id}`, cancel: `/api/v1/jobs/${job.id}` },
    });
    expect(res.body.links.output).toBeUndefined();
    // The contract's fields (docs/contract.md §3.1), plus the two additive ones docs/decisions.md
    // names (clientMetadata, progress).
    expect(Object.keys(res.body).sort()).toEqual(
      [
        "id",
        "status",
        "preset",
        "inputUrl",
        "outputUrl",
        "playbackUrl",
        "expiration",
        "duration",
        "errorMessage",
        "retryCount",
        "metadata",
        "links",
        "clientMetadata",
        "progress",
      ].sort(),
    );
    expect(res.body.metadata).toEqual({
      createdAt: expect.stringMatching(ISO_MS),
      startedAt: null,
      completedAt: null,
      lastCheckedAt: null,
    });
  });

  it("a completed job: a freshly signed outputUrl with expiration, links.output, no cancel", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    await completeJob(job.id, accountId);
    const first = await readJob(apiKey, job.id);
    expect(first.status).toBe("completed");
    expect(first.outputUrl).toMatch(/^http.*X-Amz-Signature=/);
    expect(first.expiration).toMatch(ISO_MS);
    expect(first.duration).toBe(12.5);
    expect(first.metadata.startedAt).toMatch(ISO_MS);
    expect(first.metadata.completedAt).toMatch(ISO_MS);
    expect(first.links).toEqual({
      self: `/api/v1/jobs/${job.id}`,
      output: `/api/v1/jobs/${job.id}/download-url`,
    });
    // A link is signed to the second (X-Amz-Date): once the clock has left the first one's second, a read that signs afresh gives another link.
    await vi.waitFor(() => expect(Math.floor(Date.now() / 1000)).toBeGreaterThan(signedAtSeconds(first.outputUrl!)), {
      timeout: 5000,
      interval: 20,
    });
    const second = await readJob(apiKey, job.id);
    expect(second.outputUrl).not.toBe(first.outputUrl);
  });

  it("a failed job: outputUrl and expiration null, errorMessage and retryCount shown", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    await failEveryAttempt(job.id, "Download failed: connection refused");
    const res = await readJob(apiKey, job.id);
    expect(res).toMatchObject({
      status: "failed",
      outputUrl: null,
      expiration: null,
      errorMessage: "Download failed: connection refused",
      retryCount: 2,
    });
    expect(res.links.cancel).toBeUndefined();
  });
});

describe("contract §5.3 GET /jobs › list, pagination, filters", () => {
  async function accountWithJobs(n: number) {
    const account = await newAccount("pro");
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push((await createJob(account.apiKey, i % 2 ? "mp4_264_480p" : "mp4_264_720p")).id);
    }
    return { ...account, ids };
  }

  it("newest first, default page 1 and limit 10, list items shaped as the contract says (§3.3)", async () => {
    const { apiKey, ids } = await accountWithJobs(12);
    const res = await api(apiKey).listJobs();
    expectStatus(res, 200);
    expect(res.body.jobs.map((j) => j.id)).toEqual([...ids].reverse().slice(0, 10));
    expect(res.body.pagination).toEqual({
      page: 1,
      limit: 10,
      totalPages: 2,
      totalCount: 12,
      hasNext: true,
      hasPrev: false,
    });
    expect(res.body.links).toEqual({
      self: "/api/v1/jobs?page=1&limit=10",
      next: "/api/v1/jobs?page=2&limit=10",
      prev: null,
    });
    const item = res.body.jobs[0];
    expect(Object.keys(item).sort()).toEqual(
      [
        "id",
        "status",
        "preset",
        "inputUrl",
        "outputUrl",
        "playbackUrl",
        "expiration",
        "duration",
        "errorMessage",
        "createdAt",
        "startedAt",
        "completedAt",
        "links",
      ].sort(),
    );
    // Fields of the full read that a list item must not carry (its type has no room for them).
    expect((item as Record<string, unknown>).retryCount).toBeUndefined();
    expect((item as Record<string, unknown>).metadata).toBeUndefined();
    expect(item.links).toEqual({ self: `/api/v1/jobs/${item.id}` });
    expect(item.createdAt).toMatch(ISO_MS);
  });

  it("page 2 has the rest, with prev and no next", async () => {
    const { apiKey, ids } = await accountWithJobs(12);
    const res = await api(apiKey).listJobs("page=2");
    expectStatus(res, 200);
    expect(res.body.jobs.map((j) => j.id)).toEqual([...ids].reverse().slice(10));
    expect(res.body.pagination).toMatchObject({ page: 2, hasNext: false, hasPrev: true });
    expect(res.body.links.prev).toBe("/api/v1/jobs?page=1&limit=10");
    expect(res.body.links.next).toBeNull();
  });

  it("page values that are not positive integers fall back to 1; limit is capped at 100", async () => {
    const { apiKey } = await accountWithJobs(2);
    for (const page of ["0", "-3", "abc", "1.5", ""]) {
      const res = await api(apiKey).listJobs(`page=${page}`);
      expectStatus(res, 200);
      expect(res.body.pagination.page, page).toBe(1);
    }
    const capped = await api(apiKey).listJobs("limit=1000");
    expectStatus(capped, 200);
    expect(capped.body.pagination.limit).toBe(100);
    const small = await api(apiKey).listJobs("limit=1");
    expectStatus(small, 200);
    expect(small.body.jobs).toHaveLength(1);
    expect(small.body.pagination.totalPages).toBe(2);
  });

  it("repeated, huge and NUL-bearing query values never give a non-contract answer", async () => {
    const { apiKey } = await accountWithJobs(3);
    const repeated = await api(apiKey).listJobs("page=1&page=2&limit=2&limit=1");
    expectStatus(repeated, 200);
    expect(repeated.body.pagination).toMatchObject({ totalCount: 3 });
    const huge = await api(apiKey).listJobs("page=100000000000000000000&limit=100");
    expectStatus(huge, 200);
    expect(huge.body.jobs).toEqual([]);
    expect(huge.body.pagination).toMatchObject({ totalCount: 3, totalPages: 1, hasNext: false, hasPrev: true });
    for (const filter of ["status=%00", "preset=mp4_264_720p%00", "status=queued&status=%00"]) {
      const res = await api(apiKey).listJobs(filter);
      expectStatus(res, 200, filter);
      expect(res.body.jobs, filter).toHaveLength(res.body.pagination.totalCount);
    }
    const nul = await api(apiKey).listJobs("preset=mp4_264_720p%00");
    expectStatus(nul, 200);
    expect(nul.body.pagination.totalCount).toBe(0);
  });

  it("next and prev keep the filters", async () => {
    const { apiKey } = await accountWithJobs(6);
    const res = await api(apiKey).listJobs("page=2&limit=1&preset=mp4_264_480p&status=queued");
    expectStatus(res, 200);
    expect(res.body.links).toEqual({
      self: "/api/v1/jobs?page=2&limit=1&status=queued&preset=mp4_264_480p",
      next: "/api/v1/jobs?page=3&limit=1&status=queued&preset=mp4_264_480p",
      prev: "/api/v1/jobs?page=1&limit=1&status=queued&preset=mp4_264_480p",
    });
  });

  it("filters by exact status and preset; an unknown status matches nothing", async () => {
    const { apiKey, accountId, ids } = await accountWithJobs(4);
    await completeJob(ids[0], accountId);
    const byPreset = await api(apiKey).listJobs("preset=mp4_264_480p");
    expectStatus(byPreset, 200);
    expect(byPreset.body.jobs.map((j) => j.id).sort()).toEqual([ids[1], ids[3]].sort());
    expect(byPreset.body.links.self).toBe("/api/v1/jobs?page=1&limit=10&preset=mp4_264_480p");
    const completed = await api(apiKey).listJobs("status=completed");
    expectStatus(completed, 200);
    expect(completed.body.jobs.map((j) => j.id)).toEqual([ids[0]]);
    expect(completed.body.jobs[0].outputUrl).toMatch(/X-Amz-Signature=/);
    expect(completed.body.jobs[0].expiration).toMatch(ISO_MS);
    const queued = await api(apiKey).listJobs("status=queued&preset=mp4_264_720p");
    expectStatus(queued, 200);
    expect(queued.body.jobs.map((j) => j.id)).toEqual([ids[2]]);
    const none = await api(apiKey).listJobs("status=bogus");
    expectStatus(none, 200);
    expect(none.body.jobs).toEqual([]);
    expect(none.body.pagination.totalCount).toBe(0);
  });
});

describe("contract §3.4 Pagination object › past the last page", () => {
  it("a page beyond the end is empty but still reports the totals", async () => {
    const account = await newAccount();
    for (let i = 0; i < 3; i++) await createJob(account.apiKey);
    const res = await api(account.apiKey).listJobs("page=5&limit=2");
    expectStatus(res, 200);
    expect(res.body.jobs).toEqual([]);
    expect(res.body.pagination).toEqual({
      page: 5,
      limit: 2,
      totalPages: 2,
      totalCount: 3,
      hasNext: false,
      hasPrev: true,
    });
    expect(res.body.links.prev).toBe("/api/v1/jobs?page=4&limit=2");
  });
});
