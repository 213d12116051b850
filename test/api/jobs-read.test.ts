import { describe, expect, it } from "vitest";
import { ISO_MS, SOURCE, call, completeJob, createJob, internal, newAccount } from "./harness";

describe("spec: GET /jobs/{id} › full read", () => {
  it("a queued job: every field, nulls where absent, links self and cancel only", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const res = await call("GET", `/jobs/${job.id}`, { key: apiKey });
    expect(res.status).toBe(200);
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
    // The spec's fields, plus the two additive ones the README names (clientMetadata, progress).
    expect(Object.keys(res.body).sort()).toEqual(
      ["id", "status", "preset", "inputUrl", "outputUrl", "expiration", "duration", "errorMessage", "retryCount", "metadata", "links", "clientMetadata", "progress"].sort(),
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
    const first = await call("GET", `/jobs/${job.id}`, { key: apiKey });
    expect(first.body.status).toBe("completed");
    expect(first.body.outputUrl).toMatch(/^http.*X-Amz-Signature=/);
    expect(first.body.expiration).toMatch(ISO_MS);
    expect(first.body.duration).toBe(12.5);
    expect(first.body.metadata.startedAt).toMatch(ISO_MS);
    expect(first.body.metadata.completedAt).toMatch(ISO_MS);
    expect(first.body.links).toEqual({
      self: `/api/v1/jobs/${job.id}`,
      output: `/api/v1/jobs/${job.id}/download-url`,
    });
    await new Promise((r) => setTimeout(r, 1100));
    const second = await call("GET", `/jobs/${job.id}`, { key: apiKey });
    expect(second.body.outputUrl).not.toBe(first.body.outputUrl);
  });

  it("a failed job: outputUrl and expiration null, errorMessage and retryCount shown", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    await internal(`/jobs/${job.id}/claim`, { attempt: 2 });
    await internal(`/jobs/${job.id}/fail`, { errorMessage: "Download failed: connection refused", attempt: 2, final: true });
    const res = await call("GET", `/jobs/${job.id}`, { key: apiKey });
    expect(res.body).toMatchObject({
      status: "failed",
      outputUrl: null,
      expiration: null,
      errorMessage: "Download failed: connection refused",
      retryCount: 2,
    });
    expect(res.body.links.cancel).toBeUndefined();
  });
});

describe("spec: GET /jobs › list, pagination, filters", () => {
  async function accountWithJobs(n: number) {
    const account = await newAccount("pro");
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push((await createJob(account.apiKey, i % 2 ? "mp4_264_480p" : "mp4_264_720p")).id);
    }
    return { ...account, ids };
  }

  it("newest first, default page 1 and limit 10, list items shaped as the spec says", async () => {
    const { apiKey, ids } = await accountWithJobs(12);
    const res = await call("GET", "/jobs", { key: apiKey });
    expect(res.status).toBe(200);
    expect(res.body.jobs.map((j: { id: string }) => j.id)).toEqual([...ids].reverse().slice(0, 10));
    expect(res.body.pagination).toEqual({ page: 1, limit: 10, totalPages: 2, totalCount: 12, hasNext: true, hasPrev: false });
    expect(res.body.links).toEqual({ self: "/api/v1/jobs?page=1&limit=10", next: "/api/v1/jobs?page=2&limit=10", prev: null });
    const item = res.body.jobs[0];
    expect(Object.keys(item).sort()).toEqual(
      ["id", "status", "preset", "inputUrl", "outputUrl", "expiration", "duration", "errorMessage", "createdAt", "startedAt", "completedAt", "links"].sort(),
    );
    expect(item.retryCount).toBeUndefined();
    expect(item.metadata).toBeUndefined();
    expect(item.links).toEqual({ self: `/api/v1/jobs/${item.id}` });
    expect(item.createdAt).toMatch(ISO_MS);
  });

  it("page 2 has the rest, with prev and no next", async () => {
    const { apiKey, ids } = await accountWithJobs(12);
    const res = await call("GET", "/jobs?page=2", { key: apiKey });
    expect(res.body.jobs.map((j: { id: string }) => j.id)).toEqual([...ids].reverse().slice(10));
    expect(res.body.pagination).toMatchObject({ page: 2, hasNext: false, hasPrev: true });
    expect(res.body.links.prev).toBe("/api/v1/jobs?page=1&limit=10");
    expect(res.body.links.next).toBeNull();
  });

  it("page values that are not positive integers fall back to 1; limit is capped at 100", async () => {
    const { apiKey } = await accountWithJobs(2);
    for (const page of ["0", "-3", "abc", "1.5", ""]) {
      const res = await call("GET", `/jobs?page=${page}`, { key: apiKey });
      expect(res.status).toBe(200);
      expect(res.body.pagination.page, page).toBe(1);
    }
    const capped = await call("GET", "/jobs?limit=1000", { key: apiKey });
    expect(capped.body.pagination.limit).toBe(100);
    const small = await call("GET", "/jobs?limit=1", { key: apiKey });
    expect(small.body.jobs).toHaveLength(1);
    expect(small.body.pagination.totalPages).toBe(2);
  });

  it("repeated, huge and NUL-bearing query values never give a non-contract answer", async () => {
    const { apiKey } = await accountWithJobs(3);
    const repeated = await call("GET", "/jobs?page=1&page=2&limit=2&limit=1", { key: apiKey });
    expect(repeated.status).toBe(200);
    expect(repeated.body.pagination).toMatchObject({ totalCount: 3 });
    const huge = await call("GET", "/jobs?page=100000000000000000000&limit=100", { key: apiKey });
    expect(huge.status).toBe(200);
    expect(huge.body.jobs).toEqual([]);
    expect(huge.body.pagination).toMatchObject({ totalCount: 3, totalPages: 1, hasNext: false, hasPrev: true });
    for (const filter of ["status=%00", "preset=mp4_264_720p%00", "status=queued&status=%00"]) {
      const res = await call("GET", `/jobs?${filter}`, { key: apiKey });
      expect(res.status, filter).toBe(200);
      expect(res.body.jobs, filter).toHaveLength(res.body.pagination.totalCount);
    }
    const nul = await call("GET", "/jobs?preset=mp4_264_720p%00", { key: apiKey });
    expect(nul.body.pagination.totalCount).toBe(0);
  });

  it("next and prev keep the filters", async () => {
    const { apiKey } = await accountWithJobs(6);
    const res = await call("GET", "/jobs?page=2&limit=1&preset=mp4_264_480p&status=queued", { key: apiKey });
    expect(res.body.links).toEqual({
      self: "/api/v1/jobs?page=2&limit=1&status=queued&preset=mp4_264_480p",
      next: "/api/v1/jobs?page=3&limit=1&status=queued&preset=mp4_264_480p",
      prev: "/api/v1/jobs?page=1&limit=1&status=queued&preset=mp4_264_480p",
    });
  });

  it("filters by exact status and preset; an unknown status matches nothing", async () => {
    const { apiKey, accountId, ids } = await accountWithJobs(4);
    await completeJob(ids[0], accountId);
    const byPreset = await call("GET", "/jobs?preset=mp4_264_480p", { key: apiKey });
    expect(byPreset.body.jobs.map((j: { id: string }) => j.id).sort()).toEqual([ids[1], ids[3]].sort());
    expect(byPreset.body.links.self).toBe("/api/v1/jobs?page=1&limit=10&preset=mp4_264_480p");
    const completed = await call("GET", "/jobs?status=completed", { key: apiKey });
    expect(completed.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[0]]);
    expect(completed.body.jobs[0].outputUrl).toMatch(/X-Amz-Signature=/);
    expect(completed.body.jobs[0].expiration).toMatch(ISO_MS);
    const queued = await call("GET", "/jobs?status=queued&preset=mp4_264_720p", { key: apiKey });
    expect(queued.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[2]]);
    const none = await call("GET", "/jobs?status=bogus", { key: apiKey });
    expect(none.body.jobs).toEqual([]);
    expect(none.body.pagination.totalCount).toBe(0);
  });
});

describe("spec: Pagination object › past the last page", () => {
  it("a page beyond the end is empty but still reports the totals", async () => {
    const account = await newAccount();
    for (let i = 0; i < 3; i++) await createJob(account.apiKey);
    const res = await call("GET", "/jobs?page=5&limit=2", { key: account.apiKey });
    expect(res.body.jobs).toEqual([]);
    expect(res.body.pagination).toEqual({ page: 5, limit: 2, totalPages: 2, totalCount: 3, hasNext: false, hasPrev: true });
    expect(res.body.links.prev).toBe("/api/v1/jobs?page=4&limit=2");
  });
});
