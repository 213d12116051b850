import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { jobs } from "../../drizzle/schema";
import { createStorage } from "../../worker/services/storage";
import { ISO_MS, admin, call, completeJob, createJob, newAccount, objectUrl, s3, stack } from "./harness";

const HOUR = 3600_000;

function storage() {
  return createStorage({
    S3_ENDPOINT: stack.cloud.s3.endpoint,
    S3_REGION: stack.cloud.s3.region,
    S3_BUCKET: stack.cloud.s3.bucket,
    S3_ACCESS_KEY_ID: stack.cloud.s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: stack.cloud.s3.secretAccessKey,
  } as Parameters<typeof createStorage>[0]);
}

describe("spec: GET /jobs/{id}/download-url › signed links", () => {
  it("signs a link that downloads the output with no Authorization header; free links last 4 hours", async () => {
    const { apiKey, accountId } = await newAccount("free");
    const job = await createJob(apiKey);
    await completeJob(job.id, accountId, "the output bytes");
    const before = Date.now();
    const res = await call("GET", `/jobs/${job.id}/download-url`, { key: apiKey });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["downloadUrl", "expiresAt", "message"]);
    expect(res.body.expiresAt).toMatch(ISO_MS);
    const ttl = Date.parse(res.body.expiresAt) - before;
    expect(ttl).toBeGreaterThan(4 * HOUR - 60_000);
    expect(ttl).toBeLessThanOrEqual(4 * HOUR + 1000);
    expect(new URL(res.body.downloadUrl).searchParams.get("X-Amz-Expires")).toBe(String(4 * 3600));
    const download = await fetch(res.body.downloadUrl);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe("the output bytes");
    // The bucket is private: the same object without the signature is refused.
    expect((await fetch(res.body.downloadUrl.split("?")[0])).status).toBe(403);
  });

  it("paid plans get 7-day links, the ceiling for any link", async () => {
    for (const plan of ["pro", "business", "enterprise"] as const) {
      const { apiKey, accountId } = await newAccount(plan);
      const job = await createJob(apiKey);
      await completeJob(job.id, accountId);
      const res = await call("GET", `/jobs/${job.id}/download-url`, { key: apiKey });
      expect(new URL(res.body.downloadUrl).searchParams.get("X-Amz-Expires"), plan).toBe(String(7 * 24 * 3600));
    }
  });

  it("the storage server refuses a tampered link and an expired one", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    const key = await completeJob(job.id, accountId);
    const { body } = await call("GET", `/jobs/${job.id}/download-url`, { key: apiKey });
    const tampered = new URL(body.downloadUrl);
    tampered.searchParams.set("X-Amz-Expires", "604800");
    expect((await fetch(tampered)).status).toBe(403);
    const otherKey = body.downloadUrl.replace("output.mp4", "other.mp4");
    expect((await fetch(otherKey)).status).toBe(403);
    const expired = await storage().signGet(key, 1, new Date(Date.now() - 60_000));
    expect((await fetch(expired.url)).status).toBe(403);
  });

  it("a job that is not completed → 400 with a bare message", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const res = await call("GET", `/jobs/${job.id}/download-url`, { key: apiKey });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: expect.any(String) });
  });

  it("an unknown job → 404 with a bare message", async () => {
    const { apiKey } = await newAccount();
    const res = await call("GET", `/jobs/6b1f3c1e-8c1a-4c63-9b8e-1d5a3f1e2c4b/download-url`, { key: apiKey });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: expect.any(String) });
  });

  it("output removed from storage: read shows outputUrl null, download-url → 400", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    const key = await completeJob(job.id, accountId);
    expect((await s3.fetch(objectUrl(key), { method: "DELETE" })).status).toBeLessThan(300);
    const read = await call("GET", `/jobs/${job.id}`, { key: apiKey });
    expect(read.body).toMatchObject({ status: "completed", outputUrl: null, expiration: null });
    expect(read.body.links.output).toBeUndefined();
    const sign = await call("GET", `/jobs/${job.id}/download-url`, { key: apiKey });
    expect(sign.status).toBe(400);
    expect(sign.body).toEqual({ message: expect.any(String) });
  });

  it("output under the legacy storage layout: read shows outputUrl null, download-url → 410", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    await completeJob(job.id, accountId);
    await admin.db.update(jobs).set({ storageLayout: "legacy", outputKey: `legacy-bucket/${job.id}.mp4` }).where(eq(jobs.id, job.id));
    const read = await call("GET", `/jobs/${job.id}`, { key: apiKey });
    expect(read.body).toMatchObject({ status: "completed", outputUrl: null, expiration: null });
    const sign = await call("GET", `/jobs/${job.id}/download-url`, { key: apiKey });
    expect(sign.status).toBe(410);
    expect(sign.body).toEqual({ message: expect.any(String) });
    expect(sign.body.error).toBeUndefined();
  });
});
