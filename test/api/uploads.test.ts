/**
 * Direct uploads (docs/uploads.md) against the real S3 server: the presigned PUT, the multipart
 * upload completed from the parts storage lists, the links refusing what they were not signed
 * for (a length, a type), the types accepted, the plans' maximums, and isolation between
 * accounts. The limits on an account's uploads are upload-limits.test.ts's.
 */
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { uploads } from "../../drizzle/schema";
import { MAX_UPLOAD_BYTES } from "../../domain/plans";
import { SINGLE_UPLOAD_MAX_BYTES } from "../../domain/uploads";
import { bodyOf, expectError, expectStatus, unchecked } from "../support/api-client";
import { admin, api, createJob, internal, ISO_MS, newAccount, objectUrl, s3, UUID } from "./harness";

const MiB = 1024 * 1024;
const MP4 = { contentType: "video/mp4" };

/** A PUT of `body` sent as `contentType` (fetch would call a string text/plain), or a part's, with none. */
const put = (url: string, body: Uint8Array<ArrayBuffer> | string, contentType?: string) =>
  fetch(url, { method: "PUT", body: new Blob([body]), headers: contentType ? { "Content-Type": contentType } : {} });

describe("uploads › single: one presigned PUT", () => {
  it("a PUT through uploadUrl, then GET reads completed, and the inputUrl serves the bytes to a job", async () => {
    const { apiKey } = await newAccount("free");
    const bytes = "a small video's bytes";
    const res = await api(apiKey).createUpload({ filename: "clip.mp4", contentType: "video/mp4", size: bytes.length });
    expectStatus(res, 201);
    const created = res.body;
    expect(created).toMatchObject({ status: "pending", filename: "clip.mp4", contentType: "video/mp4", size: 21 });
    expect(created.id).toMatch(UUID);
    expect(created.createdAt).toMatch(ISO_MS);
    expect(created.partSize).toBeUndefined();
    // 24 hours for the URLs; the key is the ids', nothing of the filename.
    expect(Date.parse(created.expiresAt) - Date.parse(created.createdAt)).toBeGreaterThan(24 * 3600_000 - 1000);
    const uploadUrl = new URL(created.uploadUrl!);
    expect(uploadUrl.pathname).toMatch(new RegExp(`/uploads/[0-9a-f-]{36}/${created.id}/source$`));
    expect(uploadUrl.searchParams.get("X-Amz-SignedHeaders")).toBe("content-length;content-type;host");
    expect(new URL(created.inputUrl!).searchParams.get("X-Amz-Expires")).toBe(String(7 * 24 * 3600));

    expect(bodyOf(await api(apiKey).getUpload(created.id), 200).status).toBe("pending");

    expect((await put(created.uploadUrl!, bytes, "video/mp4")).status).toBe(200);
    const read = bodyOf(await api(apiKey).getUpload(created.id), 200);
    expect(read.status).toBe("completed");
    expect(read.uploadUrl).toBeUndefined();
    const row = await admin.db.select().from(uploads).where(eq(uploads.id, created.id));
    expect(row[0].status).toBe("completed");
    expect(row[0].completedAt).toBeInstanceOf(Date);

    const download = await fetch(read.inputUrl!);
    expect(download.status).toBe(200);
    expect(download.headers.get("Content-Type")).toBe("video/mp4");
    expect(await download.text()).toBe(bytes);
    const job = await createJob(apiKey, "mp4_264_720p", { inputUrl: read.inputUrl! });
    expect(job.inputUrl).toBe(read.inputUrl);
  });

  it("with no size: 400, the size being what bounds the PUT; one over the plan's maximum is a 413; no upload is made", async () => {
    const { apiKey, accountId } = await newAccount("free");
    for (const body of [{ filename: "clip.mp4" }, { contentType: "video/mp4" }, {}]) {
      const res = await api(apiKey).createUpload(unchecked(body));
      expectError(res, 400, "Validation error");
      expect(res.body.details).toContainEqual({ field: "size", message: "Invalid input" });
    }
    const over = await api(apiKey).createUpload({ filename: "clip.mp4", size: MAX_UPLOAD_BYTES.free + MiB });
    expectError(over, 413, "Payload too large");
    expect(await admin.db.select().from(uploads).where(eq(uploads.accountId, accountId))).toEqual([]);
  });

  it("a single upload does not take POST …/complete: 409", async () => {
    const { apiKey } = await newAccount();
    const created = bodyOf(await api(apiKey).createUpload({ filename: "clip.mp4", size: 10 }), 201);
    const res = await api(apiKey).completeUpload(created.id);
    expectError(res, 409, "Conflict");
    expect(res.body.message).toMatch(/single uploads complete themselves/);
  });
});

describe("uploads › the presigned PUT allows only what it was signed for", () => {
  it("a GET with it, a PUT of another key with its query, a body of another length or type is refused by storage", async () => {
    const { apiKey } = await newAccount();
    const created = bodyOf(await api(apiKey).createUpload({ filename: "clip.mp4", size: 100 }), 201);
    const url = created.uploadUrl!;
    expect((await fetch(url)).status).toBe(403);
    const otherKey = url.replace("/source?", "/other?");
    expect((await put(otherKey, "y".repeat(100), "video/mp4")).status).toBe(403);
    const other = bodyOf(await api(apiKey).createUpload({ filename: "clip.mp4", size: 100 }), 201);
    const swapped = `${other.uploadUrl!.split("?")[0]}?${url.split("?")[1]}`;
    expect((await put(swapped, "y".repeat(100), "video/mp4")).status).toBe(403);
    expect((await put(url, "y".repeat(99), "video/mp4")).status).toBeGreaterThanOrEqual(400);
    expect((await put(url, "y".repeat(101), "video/mp4")).status).toBeGreaterThanOrEqual(400);
    // The type is signed: a page sent as HTML, or a body with no type, is refused.
    expect((await put(url, "y".repeat(100), "text/html")).status).toBe(403);
    expect((await put(url, "y".repeat(100), "video/webm")).status).toBe(403);
    expect((await put(url, "y".repeat(100))).status).toBe(403);
    const [{ key }] = await admin.db.select().from(uploads).where(eq(uploads.id, created.id));
    expect((await s3.fetch(objectUrl(key), { method: "HEAD" })).status, "nothing stored").toBe(404);
    expect(bodyOf(await api(apiKey).getUpload(created.id), 200).status).toBe("pending");
    expect((await put(url, "y".repeat(100), "video/mp4")).status).toBe(200);
    expect(bodyOf(await api(apiKey).getUpload(created.id), 200).status).toBe("completed");
  });
});

describe("uploads › multipart", () => {
  it("parts of 8 MiB; a completion with a part missing is refused naming it; then completed, and again the same", async () => {
    const { apiKey } = await newAccount("pro");
    const size = SINGLE_UPLOAD_MAX_BYTES + 1;
    const created = bodyOf(
      await api(apiKey).createUpload({ filename: "big.mov", contentType: "video/mp4", size }),
      201,
    );
    expect(created.uploadUrl).toBeUndefined();
    expect(created.partSize).toBe(8 * MiB);
    const parts = created.parts!;
    expect(parts.map((p) => p.partNumber)).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    expect(parts.slice(0, -1).every((p) => p.size === 8 * MiB)).toBe(true);
    expect(parts.at(-1)!.size).toBe(size - 12 * 8 * MiB);
    for (const part of parts) {
      const query = new URL(part.url).searchParams;
      expect(query.get("partNumber")).toBe(String(part.partNumber));
      expect(query.get("uploadId")).toBeTruthy();
      expect(query.get("X-Amz-SignedHeaders")).toBe("content-length;host");
    }

    const whole = createHash("sha256");
    const bodyOfPart = (n: number, length: number) => new Uint8Array(new ArrayBuffer(length)).fill(n);
    for (const part of parts) {
      const body = bodyOfPart(part.partNumber, part.size);
      whole.update(body);
      if (part.partNumber === 7) continue;
      expect((await put(part.url, body)).status, `part ${part.partNumber}`).toBe(200);
    }
    // A part of the wrong length is refused by storage: its length is signed.
    expect((await put(parts[6].url, bodyOfPart(7, 1000))).status).toBeGreaterThanOrEqual(400);

    const refused = await api(apiKey).completeUpload(created.id);
    expectError(refused, 409, "Conflict");
    expect(refused.body.message).toMatch(/: 7\./);
    expect(bodyOf(await api(apiKey).getUpload(created.id), 200).status).toBe("pending");

    expect((await put(parts[6].url, bodyOfPart(7, parts[6].size))).status).toBe(200);
    const completed = bodyOf(await api(apiKey).completeUpload(created.id), 200);
    expect(completed).toMatchObject({ id: created.id, status: "completed", size, partSize: 8 * MiB });
    expect(completed.parts).toBeUndefined();
    const again = bodyOf(await api(apiKey).completeUpload(created.id), 200);
    expect({ ...again, inputUrl: "" }).toEqual({ ...completed, inputUrl: "" });
    expect(bodyOf(await api(apiKey).getUpload(created.id), 200).status).toBe("completed");

    const download = await fetch(completed.inputUrl!);
    expect(download.status).toBe(200);
    const stored = new Uint8Array(await download.arrayBuffer());
    expect(stored.length).toBe(size);
    expect(createHash("sha256").update(stored).digest("hex")).toBe(whole.digest("hex"));
  });

  it("a multipart upload with no part in names every part", async () => {
    const { apiKey } = await newAccount("pro");
    const created = bodyOf(await api(apiKey).createUpload({ ...MP4, size: SINGLE_UPLOAD_MAX_BYTES + 1 }), 201);
    const res = await api(apiKey).completeUpload(created.id);
    expectError(res, 409, "Conflict");
    expect(res.body.message).toMatch(/: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13\./);
  });
});

describe("uploads › expiry", () => {
  it("past expiresAt and not completed: expired, with no URL; its completion is refused", async () => {
    const { apiKey } = await newAccount("pro");
    const single = bodyOf(await api(apiKey).createUpload({ ...MP4, size: 5 }), 201);
    const multi = bodyOf(await api(apiKey).createUpload({ ...MP4, size: 200 * MiB }), 201);
    for (const id of [single.id, multi.id])
      await admin.db
        .update(uploads)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(uploads.id, id));
    for (const id of [single.id, multi.id]) {
      const read = bodyOf(await api(apiKey).getUpload(id), 200);
      expect(read.status).toBe("expired");
      expect(read.uploadUrl ?? read.parts ?? read.inputUrl).toBeUndefined();
    }
    const res = await api(apiKey).completeUpload(multi.id);
    expectError(res, 409, "Conflict");
    expect(res.body.message).toMatch(/expired/);
  });
});

describe("uploads › the sweep", () => {
  const abandon = (id: string) =>
    admin.db
      .update(uploads)
      .set({ expiresAt: new Date(Date.now() - 2 * 3600_000) })
      .where(eq(uploads.id, id));
  const rowOf = async (id: string) => (await admin.db.select().from(uploads).where(eq(uploads.id, id)))[0];

  it("aborts a multipart upload abandoned past its expiry, its parts deleted; settles single ones as they are", async () => {
    const { apiKey } = await newAccount("pro");
    const multi = bodyOf(await api(apiKey).createUpload({ ...MP4, size: SINGLE_UPLOAD_MAX_BYTES + 1 }), 201);
    const first = multi.parts![0];
    expect((await put(first.url, new Uint8Array(new ArrayBuffer(first.size)))).status).toBe(200);
    const never = bodyOf(await api(apiKey).createUpload({ ...MP4, size: 5 }), 201);
    const arrived = bodyOf(await api(apiKey).createUpload({ ...MP4, size: 5 }), 201);
    expect((await put(arrived.uploadUrl!, "bytes", "video/mp4")).status).toBe(200);
    // One expired only a minute ago: a PUT begun before its deadline may still be arriving.
    const recent = bodyOf(await api(apiKey).createUpload({ ...MP4, size: 5 }), 201);
    for (const { id } of [multi, never, arrived]) await abandon(id);
    await admin.db
      .update(uploads)
      .set({ expiresAt: new Date(Date.now() - 60_000) })
      .where(eq(uploads.id, recent.id));

    const row = await rowOf(multi.id);
    const partsUrl = `${objectUrl(row.key)}?uploadId=${row.multipartUploadId}`;
    expect((await s3.fetch(partsUrl, { method: "GET" })).status, "ListParts before the sweep").toBe(200);
    expectStatus(await internal("/sweep", {}), 200);

    expect((await s3.fetch(partsUrl, { method: "GET" })).status, "ListParts after the sweep").toBe(404);
    expect(await rowOf(multi.id)).toMatchObject({ status: "expired" });
    expect(await rowOf(never.id)).toMatchObject({ status: "expired" });
    expect(await rowOf(arrived.id)).toMatchObject({ status: "completed", size: 5 });
    expect(await rowOf(recent.id)).toMatchObject({ status: "pending" });
    const read = bodyOf(await api(apiKey).getUpload(multi.id), 200);
    expect(read.status).toBe("expired");
    expect(read.parts ?? read.inputUrl).toBeUndefined();
    expectError(await api(apiKey).completeUpload(multi.id), 409, "Conflict");
    // The next sweep finds nothing more to do with them.
    expectStatus(await internal("/sweep", {}), 200);
    expect(await rowOf(multi.id)).toMatchObject({ status: "expired" });
  });
});

describe("uploads › limits and validation", () => {
  it("a size over the plan's maximum is a 413 naming the limit; at the limit it is taken", async () => {
    const free = await newAccount("free");
    const over = await api(free.apiKey).createUpload({ ...MP4, size: MAX_UPLOAD_BYTES.free + 1 });
    expectError(over, 413, "Payload too large");
    expect(over.body.message).toMatch(/1 GiB/);
    expectStatus(await api(free.apiKey).createUpload({ ...MP4, size: MAX_UPLOAD_BYTES.free }), 201);
    const pro = await newAccount("pro");
    const proOver = await api(pro.apiKey).createUpload({ ...MP4, size: MAX_UPLOAD_BYTES.pro + 1 });
    expectError(proOver, 413, "Payload too large");
    expect(proOver.body.message).toMatch(/5 GiB/);
    const atLimit = bodyOf(await api(pro.apiKey).createUpload({ ...MP4, size: MAX_UPLOAD_BYTES.pro }), 201);
    expect(atLimit.parts).toHaveLength(640);
  });

  it("bad fields are 400s in the contract's validation format", async () => {
    const { apiKey } = await newAccount();
    const bad: [string, Record<string, unknown>][] = [
      ["filename", { filename: "a/b.mp4" }],
      ["filename", { filename: "a\\b.mp4" }],
      ["filename", { filename: "a\u0007b.mp4" }],
      ["filename", { filename: "" }],
      ["filename", { filename: "x".repeat(256) }],
      ["filename", { filename: "\ud800.mp4" }],
      ["filename", { filename: 12 }],
      ["contentType", { contentType: "video" }],
      ["contentType", { contentType: "video/mp4; codecs=avc1" }],
      ["contentType", { contentType: `video/${"x".repeat(122)}` }],
      ["size", { size: 0 }],
      ["size", { size: 1.5 }],
      ["size", { size: "12" }],
      ["size", { size: -1 }],
    ];
    for (const [field, body] of bad) {
      const res = await api(apiKey).raw({ method: "POST", path: "/uploads", json: body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toMatchObject({ error: "Validation error", message: "Invalid request parameters" });
      expect((res.body as { details: { field: string }[] }).details.map((d) => d.field)).toContain(field);
    }
    expectStatus(
      await api(apiKey).createUpload({ filename: "x".repeat(255), contentType: "video/x-matroska", size: 1 }),
      201,
    );
    const unparsable = await api(apiKey).raw({ method: "POST", path: "/uploads", body: "{" });
    expect(unparsable.status).toBe(400);
    expect(unparsable.body).toMatchObject({ error: "Invalid JSON" });
    expectError(await api().createUpload({ ...MP4, size: 1 }), 401, "Unauthorized");
  });
});

describe("uploads › content types", () => {
  it("media and caption types are taken, stored in lower case, and sent to storage as the object's type", async () => {
    const { apiKey } = await newAccount("pro");
    const taken: [Record<string, string>, string][] = [
      [{ contentType: "video/x-matroska" }, "video/x-matroska"],
      [{ contentType: "Video/MP4" }, "video/mp4"],
      [{ contentType: "audio/flac" }, "audio/flac"],
      [{ contentType: "image/png" }, "image/png"],
      [{ contentType: "image/jpeg" }, "image/jpeg"],
      [{ contentType: "text/vtt" }, "text/vtt"],
      [{ contentType: "application/x-subrip" }, "application/x-subrip"],
      // None given, or only octet-stream: the filename's extension names it.
      [{ filename: "interview.MOV" }, "video/quicktime"],
      [{ filename: "logo.png" }, "image/png"],
      [{ filename: "talk.srt", contentType: "application/octet-stream" }, "application/x-subrip"],
      [{ filename: "song.mp3" }, "audio/mpeg"],
    ];
    for (const [fields, stored] of taken) {
      const created = bodyOf(await api(apiKey).createUpload({ ...fields, size: 4 }), 201);
      expect(created.contentType, JSON.stringify(fields)).toBe(stored);
      expect((await put(created.uploadUrl!, "1234", stored)).status, JSON.stringify(fields)).toBe(200);
      const read = bodyOf(await api(apiKey).getUpload(created.id), 200);
      expect(read.status).toBe("completed");
      expect((await fetch(read.inputUrl!)).headers.get("Content-Type"), JSON.stringify(fields)).toBe(stored);
    }
    // A multipart upload's type is set when storage begins it; its parts carry none.
    const multi = bodyOf(
      await api(apiKey).createUpload({ filename: "long.webm", size: SINGLE_UPLOAD_MAX_BYTES + 1 }),
      201,
    );
    expect(multi.contentType).toBe("video/webm");
    const [{ key, multipartUploadId }] = await admin.db.select().from(uploads).where(eq(uploads.id, multi.id));
    expect(multipartUploadId).toBeTruthy();
    expect(key).toMatch(/\/source$/);
  });

  it("anything else is a 400 naming contentType, and no upload is made", async () => {
    const { apiKey, accountId } = await newAccount();
    const refused: Record<string, string>[] = [
      { contentType: "text/html" },
      { contentType: "image/svg+xml" },
      { contentType: "application/javascript" },
      { contentType: "text/plain" },
      { contentType: "image/gif" },
      { contentType: "application/xhtml+xml" },
      { contentType: "text/html", filename: "clip.mp4" },
      { contentType: "application/octet-stream" },
      { filename: "page.html" },
      { filename: "clip" },
      {},
    ];
    for (const fields of refused) {
      const res = await api(apiKey).createUpload(unchecked({ ...fields, size: 10 }));
      expectError(res, 400, "Validation error");
      expect(res.body.details, JSON.stringify(fields)).toEqual([
        { field: "contentType", message: expect.stringMatching(/^must be .*video\/\*, audio\/\*, image\/png/) },
      ]);
    }
    expect(await admin.db.select().from(uploads).where(eq(uploads.accountId, accountId))).toEqual([]);
  });
});

describe("uploads › isolation", () => {
  it("another account's upload, an unknown id, a malformed id: 404", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    const created = bodyOf(await api(owner.apiKey).createUpload({ ...MP4, size: 10 }), 201);
    for (const id of [created.id, crypto.randomUUID(), "not-a-uuid", `${created.id}x`]) {
      expectError(await api(other.apiKey).getUpload(id), 404, "Not found");
      expectError(await api(other.apiKey).completeUpload(id), 404, "Not found");
    }
    expectStatus(await api(owner.apiKey).getUpload(created.id), 200);
  });
});
