import { describe, expect, it } from "vitest";
import { usage } from "../../drizzle/schema";
import { quotaPeriod } from "../../domain/time";
import { expectStatus, unchecked } from "../support/api-client";
import { admin, api, createJob, newAccount, SOURCE } from "./harness";

const create = (key: string) => api(key).createJob({ inputUrl: SOURCE, preset: "mp4_264_720p" });

describe("contract §4.3 rule 1 and §9.1 Limits › the monthly quota", () => {
  it("60 concurrent creations against 10 remaining units: exactly 10 × 201 and 50 × 429", async () => {
    const { apiKey } = await newAccount("free");
    const results = await Promise.all(Array.from({ length: 60 }, () => create(apiKey)));
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 429);
    expect(created).toHaveLength(10);
    expect(refused).toHaveLength(50);
    expect(created.map((r) => r.body.user.remainingJobs).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const r of refused) {
      expect(r.body).toEqual({
        error: "Usage limit exceeded",
        message: expect.any(String),
        usage: { current: 10, limit: 10, plan: "Starter" },
      });
    }
    const list = await api(apiKey).listJobs("limit=100");
    expectStatus(list, 200);
    expect(list.body.pagination.totalCount).toBe(10);
  });

  it("concurrency holds for a paid plan close to its limit", async () => {
    const { apiKey, accountId } = await newAccount("pro");
    await admin.db.insert(usage).values({ accountId, period: quotaPeriod(new Date()), count: 995 });
    const results = await Promise.all(Array.from({ length: 50 }, () => create(apiKey)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429)).toHaveLength(45);
    expect(results.find((r) => r.status === 429)!.body.usage).toEqual({
      current: 1000,
      limit: 1000,
      plan: "Indie/Pro",
    });
  });

  it("200 concurrent creations against 120 remaining units: exactly 120 × 201, every 429 tells the full count", async () => {
    const { apiKey, accountId } = await newAccount("pro");
    await admin.db.insert(usage).values({ accountId, period: quotaPeriod(new Date()), count: 880 });
    const results = await Promise.all(Array.from({ length: 200 }, () => create(apiKey)));
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(120);
    expect(created.map((r) => r.body.user.remainingJobs).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 120 }, (_, i) => i),
    );
    const refused = results.filter((r) => r.status === 429);
    expect(refused).toHaveLength(80);
    for (const r of refused) expect(r.body.usage).toEqual({ current: 1000, limit: 1000, plan: "Indie/Pro" });
    const list = await api(apiKey).listJobs("limit=100");
    expectStatus(list, 200);
    expect(list.body.pagination.totalCount).toBe(120);
  });

  it("the counter is per calendar month: last month's usage does not count", async () => {
    const { apiKey, accountId } = await newAccount("free");
    const now = new Date();
    const lastMonth = quotaPeriod(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)));
    await admin.db.insert(usage).values({ accountId, period: lastMonth, count: 10 });
    const res = await create(apiKey);
    expectStatus(res, 201);
    expect(res.body.user.remainingJobs).toBe(9);
  });

  it("a request refused whatever the quota gets its own answer when the quota is used up: 403 for a preset outside the plan, 400 for an unknown one", async () => {
    const { apiKey, accountId } = await newAccount("free");
    await admin.db.insert(usage).values({ accountId, period: quotaPeriod(new Date()), count: 10 });
    const outside = await api(apiKey).createJob({ inputUrl: SOURCE, preset: "mp4_264_1080p" });
    expectStatus(outside, 403);
    expect(outside.body).toMatchObject({ code: "PRESET_NOT_ALLOWED", yourPlan: "free" });
    expect((await api(apiKey).createJob(unchecked({ inputUrl: SOURCE, preset: "no_such_preset" }))).status).toBe(400);
    expect((await create(apiKey)).status).toBe(429);
  });

  it("cancelling does not return the unit", async () => {
    const { apiKey } = await newAccount("free");
    const jobs = [];
    for (let i = 0; i < 10; i++) jobs.push(await createJob(apiKey));
    await api(apiKey).cancelJob(jobs[0].id);
    const res = await create(apiKey);
    expectStatus(res, 429);
    expect(res.body.usage.current).toBe(10);
  });

  it("a plan change applies at once (new limit, new display name)", async () => {
    const { apiKey, accountId } = await newAccount("free");
    for (let i = 0; i < 10; i++) await createJob(apiKey);
    expect((await create(apiKey)).status).toBe(429);
    await admin.setPlan(accountId, "pro");
    const res = await create(apiKey);
    expectStatus(res, 201);
    expect(res.body.user).toEqual({ remainingJobs: 989, plan: "Indie/Pro" });
  });
});
