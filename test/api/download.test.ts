import { Redis } from "@upstash/redis";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { jobs } from "../../drizzle/schema";
import { FOUND_OUTPUT_TTL_SECONDS, foundOutputEntry } from "../../worker/lib/output-links";
import { createStorage } from "../../worker/services/storage";
import { bodyOf, expectStatus } from "../support/api-client";
import { admin, api, completeJob, createJob, ISO_MS, newAccount, objectUrl, readJob, s3, stack } from "./harness";

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

describe("contract §5.5 GET /jobs/{id}/download-url › signed links", () => {
  it("signs a link that downloads the output with no Authorization header; free links last 4 hours", async () => {
    const { apiKey, accountId } = await newAccount("free");
    const job = await createJob(apiKey);
    await completeJob(job.id, accountId, "the output bytes");
    const before = Date.now();
    const res = await api(apiKey).getDownloadUrl(job.id);
    expectStatus(res, 200);
    expect(Object.keys(res.body).sort()).toEqual(["downloadUrl", "expiresAt", "message"]);
    expect(res.body.expiresAt).toMatch(ISO_MS);
    const ttl = Date.parse(res.body.expiresAt) - before;
    expect(ttl).toBeGreaterThan(4 * HOUR - 60_000);
    expect(ttl).toBeLessThanOrEqual(4 * HOUR + 1000);
    const signature = new URL(res.body.downloadUrl).searchParams;
    expect(signature.get("X-Amz-Expires")).toBe(String(4 * 3600));
    // expiresAt is the moment the link stops working: the signing time plus its lifetime.
    const signedAt = Date.parse(
      signature.get("X-Amz-Date")!.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, "$1-$2-$3T$4:$5:$6Z"),
    );
    expect(Date.parse(res.body.expiresAt)).toBe(signedAt + 4 * HOUR);
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
      const res = await api(apiKey).getDownloadUrl(job.id);
      expectStatus(res, 200);
      expect(new URL(res.body.downloadUrl).searchParams.get("X-Amz-Expires"), plan).toBe(String(7 * 24 * 3600));
    }
  });

  it("the storage server refuses a tampered link and an expired one", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    const key = await completeJob(job.id, accountId);
    const body = bodyOf(await api(apiKey).getDownloadUrl(job.id), 200);
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
    const res = await api(apiKey).getDownloadUrl(job.id);
    expectStatus(res, 400);
    expect(res.body).toEqual({ message: expect.any(String) });
  });

  it("an unknown job → 404 with a bare message", async () => {
    const { apiKey } = await newAccount();
    const res = await api(apiKey).getDownloadUrl("6b1f3c1e-8c1a-4c63-9b8e-1d5a3f1e2c4b");
    expectStatus(res, 404);
    expect(res.body).toEqual({ message: expect.any(String) });
  });

  it("output removed from storage: read shows outputUrl null, download-url → 400", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    const key = await completeJob(job.id, accountId);
    expect((await s3.fetch(objectUrl(key), { method: "DELETE" })).status).toBeLessThan(300);
    const read = await api(apiKey).getJob(job.id);
    expectStatus(read, 200);
    expect(read.body).toMatchObject({ status: "completed", outputUrl: null, expiration: null });
    expect(read.body.links.output).toBeUndefined();
    const sign = await api(apiKey).getDownloadUrl(job.id);
    expectStatus(sign, 400);
    expect(sign.body).toEqual({ message: expect.any(String) });
  });

  it("output under the legacy storage layout: read shows outputUrl null, download-url → 410", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    await completeJob(job.id, accountId);
    await admin.db
      .update(jobs)
      .set({ storageLayout: "legacy", outputKey: `legacy-bucket/${job.id}.mp4` })
      .where(eq(jobs.id, job.id));
    const read = await api(apiKey).getJob(job.id);
    expectStatus(read, 200);
    expect(read.body).toMatchObject({ status: "completed", outputUrl: null, expiration: null });
    const sign = await api(apiKey).getDownloadUrl(job.id);
    expectStatus(sign, 410);
    expect(sign.body).toEqual({ message: expect.any(String) });
    expect((sign.body as Record<string, unknown>).error).toBeUndefined();
  });
});

/** `db;dur=2;desc="1 call", cache;dur=1;desc="1 call"` → { db: 1, cache: 1 }: calls per kind of sub-request. */
function subrequests(res: { headers: Headers }): Record<string, number> {
  const header = res.headers.get("Server-Timing") ?? "";
  return Object.fromEntries(
    [...header.matchAll(/([\w-]+);dur=[\d.]+;desc="(\d+) calls?"/g)].map((m) => [m[1], Number(m[2])]),
  );
}

describe("reads that sign a link: the storage HEAD, remembered for a minute when it found the output", () => {
  const redis = new Redis({ url: stack.cloud.redis.url, token: stack.cloud.redis.token });

  it("polling a completed job pays the HEAD once; download-url asks storage every time", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    const key = await completeJob(job.id, accountId);

    const first = await api(apiKey).getJob(job.id);
    expectStatus(first, 200);
    expect(first.body.outputUrl).toEqual(expect.any(String));
    expect(subrequests(first)).toMatchObject({ "storage-head": 1, sign: 1 });
    const ttl = await redis.ttl(foundOutputEntry(key));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(FOUND_OUTPUT_TTL_SECONDS);

    const polled = await api(apiKey).getJob(job.id);
    expectStatus(polled, 200);
    expect(polled.body.outputUrl).toEqual(expect.any(String));
    expect(subrequests(polled)["storage-head"]).toBeUndefined();
    const listed = await api(apiKey).listJobs();
    expectStatus(listed, 200);
    expect(listed.body.jobs[0].outputUrl).toEqual(expect.any(String));
    expect(subrequests(listed)["storage-head"]).toBeUndefined();

    const signed = await api(apiKey).getDownloadUrl(job.id);
    expectStatus(signed, 200);
    expect(subrequests(signed)).toMatchObject({ "storage-head": 1 });
  });

  it("an output removed meanwhile: download-url says so at once, reads once the memory of the HEAD is gone; a missing output is not remembered", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    const key = await completeJob(job.id, accountId);
    expect((await readJob(apiKey, job.id)).outputUrl).toEqual(expect.any(String));
    expect((await s3.fetch(objectUrl(key), { method: "DELETE" })).status).toBeLessThan(300);

    expect((await api(apiKey).getDownloadUrl(job.id)).status).toBe(400);
    // Within the minute the read still signs a link (which storage answers 404), as one signed just before the removal would.
    expect((await readJob(apiKey, job.id)).outputUrl).toEqual(expect.any(String));
    await redis.del(foundOutputEntry(key));
    const read = await api(apiKey).getJob(job.id);
    expectStatus(read, 200);
    expect(read.body).toMatchObject({ outputUrl: null, expiration: null });
    expect(subrequests(read)).toMatchObject({ "storage-head": 1 });
    expect(await redis.exists(foundOutputEntry(key))).toBe(0);
    expect(subrequests(await api(apiKey).getJob(job.id))).toMatchObject({ "storage-head": 1 });
  });

  it("every API answer says where its time went: a job's read and a page of jobs are one database call each, the key checked in it", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const read = await api(apiKey).getJob(job.id);
    expect(subrequests(read)).toEqual({ db: 1 });
    expect(read.headers.get("Server-Timing")).toMatch(/total;dur=[\d.]+/);
    const listed = await api(apiKey).listJobs();
    expect(subrequests(listed)).toEqual({ db: 1 });
  });
});
