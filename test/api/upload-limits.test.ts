/**
 * The limits on an account's direct uploads (docs/uploads.md#limits), against the real S3 server:
 * the cap on pending uploads (a 429 saying how many are open and when they expire, held under
 * concurrent creations), the storage bound on what its uploads hold, and the retention after
 * which the sweep deletes a completed upload's object, with no link signed to outlive it.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { uploads } from "../../drizzle/schema";
import {
  MAX_PENDING_UPLOADS,
  MAX_UPLOAD_BYTES,
  UPLOAD_RETENTION_SECONDS,
  UPLOAD_STORAGE_BYTES,
} from "../../domain/plans";
import { bodyOf, expectError, expectStatus } from "../support/api-client";
import { admin, api, internal, newAccount, objectUrl, s3 } from "./harness";

const MiB = 1024 * 1024;

const put = (url: string, body: string, contentType: string) =>
  fetch(url, { method: "PUT", body, headers: { "Content-Type": contentType } });

/** A single upload of `size` bytes, pending. */
async function pending(apiKey: string, size = 4) {
  return bodyOf(await api(apiKey).createUpload({ filename: "clip.mp4", size }), 201);
}

/** A single upload with its bytes in storage, read once so that it is recorded completed. */
async function completed(apiKey: string) {
  const created = await pending(apiKey);
  expect((await put(created.uploadUrl!, "1234", "video/mp4")).status).toBe(200);
  const read = bodyOf(await api(apiKey).getUpload(created.id), 200);
  expect(read.status).toBe("completed");
  return read;
}

const rowOf = async (id: string) => (await admin.db.select().from(uploads).where(eq(uploads.id, id)))[0];
const setRow = (id: string, fields: Partial<typeof uploads.$inferInsert>) =>
  admin.db.update(uploads).set(fields).where(eq(uploads.id, id));

describe("upload limits › pending uploads are capped by plan", () => {
  it("the Starter plan's 11th pending upload is a 429 saying how many are open and when they expire", async () => {
    const { apiKey } = await newAccount("free");
    const open = [];
    for (let i = 0; i < MAX_PENDING_UPLOADS.free; i++) open.push(await pending(apiKey));
    const refused = await api(apiKey).createUpload({ filename: "clip.mp4", size: 4 });
    expectError(refused, 429, "Usage limit exceeded");
    expect(refused.body.usage).toEqual({ current: 10, limit: 10, plan: "Starter" });
    const first = open[0].expiresAt;
    const last = open.at(-1)!.expiresAt;
    expect(refused.body.message).toBe(
      `You have 10 uploads open (pending), the most the Starter plan allows at once (10). Finish uploading one, or wait until one expires: ${first === last ? `it expires at ${first}` : `the first expires at ${first}, the last at ${last}`}.`,
    );

    // One finished (its PUT in, read completed) is no longer open.
    expect((await put(open[3].uploadUrl!, "1234", "video/mp4")).status).toBe(200);
    expect(bodyOf(await api(apiKey).getUpload(open[3].id), 200).status).toBe("completed");
    await pending(apiKey);
    expectError(await api(apiKey).createUpload({ filename: "clip.mp4", size: 4 }), 429, "Usage limit exceeded");
    // Nor is one past its expiresAt, before the sweep has stored it expired.
    await setRow(open[5].id, { expiresAt: new Date(Date.now() - 1000) });
    await pending(apiKey);
    expectError(await api(apiKey).createUpload({ filename: "clip.mp4", size: 4 }), 429, "Usage limit exceeded");
  });

  it("creations at once stop at the cap: 14 multipart ones on a Starter account make exactly 10 uploads", async () => {
    const { apiKey, accountId } = await newAccount("free");
    const answers = await Promise.all(
      Array.from({ length: 14 }, () => api(apiKey).createUpload({ filename: "long.mp4", size: 200 * MiB })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(10).fill(201), ...Array(4).fill(429)]);
    const rows = await admin.db.select().from(uploads).where(eq(uploads.accountId, accountId));
    expect(rows).toHaveLength(10);
    expect(rows.every((r) => r.status === "pending" && r.multipartUploadId)).toBe(true);
  });

  it("the cap is the plan's: an Indie/Pro account opens more than ten", async () => {
    const { apiKey } = await newAccount("pro");
    for (let i = 0; i < MAX_PENDING_UPLOADS.free + 1; i++) await pending(apiKey);
    expect(MAX_PENDING_UPLOADS.pro).toBeGreaterThan(MAX_PENDING_UPLOADS.free + 1);
  });
});

describe("upload limits › what an account's uploads hold is bounded by plan", () => {
  it("pending (as declared) and completed uploads count until they expire or are deleted; over the bound is a 429", async () => {
    const { apiKey } = await newAccount("free");
    const GiB = MAX_UPLOAD_BYTES.free;
    expect(UPLOAD_STORAGE_BYTES.free).toBe(5 * GiB);
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await pending(apiKey, GiB));
    const small = await completed(apiKey);
    const nearlyFull = GiB - 4 - 1;
    await pending(apiKey, nearlyFull);
    // 4 GiB pending, 4 bytes completed, 1 GiB less 5 bytes pending: 1 byte left.
    await pending(apiKey, 1);
    const refused = await api(apiKey).createUpload({ filename: "clip.mp4", size: 1 });
    expectError(refused, 429, "Usage limit exceeded");
    expect(refused.body.usage).toEqual({ current: 5 * GiB, limit: 5 * GiB, plan: "Starter" });
    expect(refused.body.message).toBe(
      `This upload's 1 bytes would take your uploads to ${5 * GiB + 1} bytes, over the Starter plan's 5 GiB (${5 * GiB} bytes). Uploads count while pending, until they expire, and once completed, until they are deleted. The next of them stops counting at ${held[0].expiresAt}.`,
    );

    // The completed one stops counting once it is due for deletion.
    await setRow(small.id, { deleteAt: new Date(Date.now() - 1000) });
    bodyOf(await api(apiKey).createUpload({ filename: "clip.mp4", size: 4 }), 201);
    expectError(await api(apiKey).createUpload({ filename: "clip.mp4", size: 1 }), 429, "Usage limit exceeded");
    // A pending one past its expiresAt holds nothing: its URLs are spent.
    await setRow(held[0].id, { expiresAt: new Date(Date.now() - 1000) });
    bodyOf(await api(apiKey).createUpload({ filename: "clip.mp4", size: GiB }), 201);
  });

  it("a multipart upload the bound refuses leaves no row", async () => {
    const { apiKey, accountId } = await newAccount("free");
    const GiB = MAX_UPLOAD_BYTES.free;
    for (let i = 0; i < 5; i++) await pending(apiKey, GiB);
    const before = await admin.db.select().from(uploads).where(eq(uploads.accountId, accountId));
    expectError(await api(apiKey).createUpload({ filename: "long.mp4", size: 200 * MiB }), 429, "Usage limit exceeded");
    expect(await admin.db.select().from(uploads).where(eq(uploads.accountId, accountId))).toHaveLength(before.length);
  });
});

describe("upload limits › retention: completed uploads are deleted, and no link outlives the object", () => {
  it("deletesAt is the plan's retention from creation", async () => {
    for (const plan of ["free", "pro", "enterprise"] as const) {
      const { apiKey } = await newAccount(plan);
      const created = await pending(apiKey);
      expect(Date.parse(created.deletesAt) - Date.parse(created.createdAt), plan).toBe(
        UPLOAD_RETENTION_SECONDS[plan] * 1000,
      );
      expect((await rowOf(created.id)).deleteAt.toISOString()).toBe(created.deletesAt);
    }
  });

  it("a read near deletesAt signs its link to end by then; past it, the upload reads deleted with no link", async () => {
    const { apiKey } = await newAccount("pro");
    const upload = await completed(apiKey);
    const deleteAt = new Date(Date.now() + 3600_000);
    await setRow(upload.id, { deleteAt });
    const read = bodyOf(await api(apiKey).getUpload(upload.id), 200);
    expect(read).toMatchObject({ status: "completed", deletesAt: deleteAt.toISOString() });
    const link = new URL(read.inputUrl!).searchParams;
    const signedAt = Date.parse(
      link.get("X-Amz-Date")!.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"),
    );
    const expires = Number(link.get("X-Amz-Expires"));
    expect(expires).toBeGreaterThan(3500);
    expect(signedAt + expires * 1000).toBeLessThanOrEqual(deleteAt.getTime());

    await setRow(upload.id, { deleteAt: new Date(Date.now() - 1000) });
    const due = bodyOf(await api(apiKey).getUpload(upload.id), 200);
    expect(due.status).toBe("deleted");
    expect(due.inputUrl ?? due.uploadUrl ?? due.parts).toBeUndefined();
  });

  it("the sweep deletes the object and stores the row deleted; one not due is kept", async () => {
    const { apiKey, accountId } = await newAccount("free");
    const due = await completed(apiKey);
    const kept = await completed(apiKey);
    const stillPending = await pending(apiKey);
    for (const { id } of [due, stillPending]) await setRow(id, { deleteAt: new Date(Date.now() - 1000) });
    const [dueRow, keptRow] = [await rowOf(due.id), await rowOf(kept.id)];
    expect((await s3.fetch(objectUrl(dueRow.key), { method: "HEAD" })).status, "before the sweep").toBe(200);

    const swept = await internal("/sweep", {});
    expectStatus(swept, 200);
    expect((await s3.fetch(objectUrl(dueRow.key), { method: "HEAD" })).status, "after the sweep").toBe(404);
    expect(await rowOf(due.id)).toMatchObject({ status: "deleted" });
    expect((await s3.fetch(objectUrl(keptRow.key), { method: "HEAD" })).status).toBe(200);
    expect(await rowOf(kept.id)).toMatchObject({ status: "completed" });
    // Only completed uploads are deleted: a pending one is the abandoned uploads' step's, at its expiry.
    expect(await rowOf(stillPending.id)).toMatchObject({ status: "pending" });

    const read = bodyOf(await api(apiKey).getUpload(due.id), 200);
    expect(read.status).toBe("deleted");
    expect(read.inputUrl).toBeUndefined();
    expect(bodyOf(await api(apiKey).completeUpload(due.id), 200).status).toBe("deleted");
    expectStatus(await internal("/sweep", {}), 200);
    const deleted = await admin.db
      .select()
      .from(uploads)
      .where(and(eq(uploads.accountId, accountId), eq(uploads.status, "deleted")));
    expect(deleted.map((r) => r.id)).toEqual([due.id]);
  });
});
