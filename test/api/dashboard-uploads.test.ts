/**
 * The dashboard's upload (docs/dashboard.md#uploading-a-file) without the browser: the steps the
 * page's script takes, each part relayed by the Worker to the real S3 server, then the encode
 * through the API's own job creation; and what each step refuses.
 */
import { createHash, randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { jobs, uploads, users } from "../../drizzle/schema";
import { uploadKeyFor } from "../../domain/uploads";
import { bodyOf } from "../support/api-client";
import { admin, api, objectUrl, s3, stack } from "./harness";
import { DashboardSession, formToken, signedUp } from "./dashboard-session";

const MiB = 1024 * 1024;
const JSON_ACCEPT = { Accept: "application/json", Origin: stack.apiUrl };

interface Uploader {
  session: DashboardSession;
  token: string;
  accountId: string;
}

async function uploader(): Promise<Uploader> {
  const { session, email } = await signedUp();
  const [user] = await admin.db.select().from(users).where(eq(users.email, email));
  const page = await session.get("/dashboard/upload");
  expect(page.status).toBe(200);
  return { session, token: formToken(page.html), accountId: user.accountId };
}

const json = (page: { html: string }) => JSON.parse(page.html);

/** The script's first step: an upload of `size` bytes for the session's account. */
async function create(u: Uploader, fields: Record<string, string>) {
  return u.session.post("/dashboard/uploads", { _csrf: u.token, ...fields }, JSON_ACCEPT);
}

async function created(u: Uploader, size: number) {
  const res = await create(u, { filename: "clip.mp4", contentType: "video/mp4", size: String(size) });
  expect(res.status, res.html).toBe(201);
  return json(res) as { id: string; parts: { partNumber: number; size: number }[] };
}

const putPart = (
  u: Uploader,
  id: string,
  n: number | string,
  body: Uint8Array<ArrayBuffer> | string,
  token = u.token,
) => u.session.put(`/dashboard/uploads/${id}/parts/${n}`, body, { ...JSON_ACCEPT, "X-CSRF-Token": token });

const complete = (u: Uploader, id: string) =>
  u.session.post(`/dashboard/uploads/${id}/complete`, { _csrf: u.token }, JSON_ACCEPT);

const encode = (u: Uploader, id: string, preset: string) =>
  u.session.post(`/dashboard/uploads/${id}/encode`, { _csrf: u.token, preset });

async function stored(key: string) {
  const res = await s3.fetch(objectUrl(key));
  return res.ok ? Buffer.from(await res.arrayBuffer()) : null;
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

let owner: Uploader;
beforeAll(async () => {
  owner = await uploader();
});

describe("dashboard uploads › the page", () => {
  it("offers a drop zone, a picker, a progress bar and the plan's presets only, and the nav links to it", async () => {
    const page = await owner.session.get("/dashboard/upload");
    expect(page.html).toContain('id="drop-zone"');
    expect(page.html).toContain('type="file"');
    expect(page.html).toContain('<progress id="upload-progress"');
    expect(page.html).toContain('<option value="mp4_264_480p">');
    expect(page.html).not.toContain('value="mp4_264_1080p"');
    expect(page.html).toContain("At most 1 GiB on your plan");
    expect((await owner.session.get("/dashboard")).html).toContain('href="/dashboard/upload"');
  });
});

describe("dashboard uploads › the plan's limits", () => {
  it("the page shows what the account's uploads hold of the plan's storage, how many are open, and how long they are kept", async () => {
    const fresh = await uploader();
    const page = async () => (await fresh.session.get("/dashboard/upload")).html;
    const before = await page();
    expect(before).toContain('<meter id="upload-storage-meter"');
    expect(before).toMatch(/data-testid="upload-storage-text">0 bytes of 5 GiB used</);
    expect(before).toMatch(/data-testid="upload-open-text">0 of 10 uploads open</);
    expect(before).toContain("deleted, 7 days after it was begun");
    await created(fresh, 3 * MiB);
    const after = await page();
    expect(after).toMatch(/data-testid="upload-storage-text">3 MiB of 5 GiB used</);
    expect(after).toMatch(/data-testid="upload-open-text">1 of 10 uploads open</);
    expect(after).toMatch(/The next one stops counting \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\./);
  });

  it("past the cap on open uploads, a creation is a 429 in the API's format, and the page says new uploads are refused", async () => {
    const fresh = await uploader();
    for (let i = 0; i < 10; i++) await created(fresh, 10);
    const refused = await create(fresh, { filename: "clip.mp4", contentType: "video/mp4", size: "10" });
    expect(refused.status).toBe(429);
    expect(json(refused)).toMatchObject({
      error: "Usage limit exceeded",
      message: expect.stringContaining("You have 10 uploads open (pending)"),
      usage: { current: 10, limit: 10, plan: "Starter" },
    });
    expect((await fresh.session.get("/dashboard/upload")).html).toContain("New uploads are refused");
  });

  it("the file's type is the browser's, or named from its extension when the browser gives none; text/html is refused", async () => {
    const bytes = randomBytes(100);
    const res = await create(owner, { filename: "picked.mkv", contentType: "", size: String(bytes.length) });
    expect(res.status, res.html).toBe(201);
    const { id } = json(res) as { id: string };
    expect((await admin.db.select().from(uploads).where(eq(uploads.id, id)))[0].contentType).toBe("video/x-matroska");
    // The relayed PUT carries the type signed into its URL: storage keeps it as the object's.
    expect((await putPart(owner, id, 1, bytes)).status).toBe(200);
    const object = await s3.fetch(objectUrl(uploadKeyFor(owner.accountId, id)), { method: "HEAD" });
    expect(object.headers.get("Content-Type")).toBe("video/x-matroska");

    const html = await create(owner, { filename: "page.html", contentType: "text/html", size: "10" });
    expect(html.status).toBe(400);
    expect(json(html)).toMatchObject({ error: "Validation error", details: [{ field: "contentType" }] });
  });
});

describe("dashboard uploads › a file through the Worker, then encoded", () => {
  it("a small file is one relayed PUT: completed, stored byte for byte, encoded into a queued job of the account", async () => {
    const bytes = randomBytes(4096);
    const upload = await created(owner, bytes.length);
    expect(upload.parts).toEqual([{ partNumber: 1, size: 4096 }]);
    const [row] = await admin.db.select().from(uploads).where(eq(uploads.id, upload.id));
    expect(row).toMatchObject({ accountId: owner.accountId, multipartUploadId: null, filename: "clip.mp4" });

    const sent = await putPart(owner, upload.id, 1, bytes);
    expect(sent.status, sent.html).toBe(200);
    expect(json(sent)).toEqual({ partNumber: 1, size: 4096 });
    const done = await complete(owner, upload.id);
    expect(done.status, done.html).toBe(200);
    expect(json(done)).toEqual({ id: upload.id, status: "completed", size: 4096 });
    expect((await stored(uploadKeyFor(owner.accountId, upload.id)))?.equals(bytes)).toBe(true);

    const usage = async () => (await owner.session.get("/dashboard")).html.match(/(\d+) of 10 jobs used/)?.[1];
    const before = Number(await usage());
    const encoded = await encode(owner, upload.id, "mp4_264_480p");
    expect(encoded.status, encoded.html).toBe(303);
    const jobId = encoded.location!.match(/^\/dashboard\/jobs\/([0-9a-f-]{36})$/)![1];
    const [job] = await admin.db.select().from(jobs).where(eq(jobs.id, jobId));
    expect(job).toMatchObject({ accountId: owner.accountId, status: "queued", preset: "mp4_264_480p" });
    expect(new URL(job.inputUrl).pathname).toMatch(new RegExp(`/${upload.id}/source$`));
    expect(Buffer.from(await (await fetch(job.inputUrl)).arrayBuffer()).equals(bytes)).toBe(true);
    // The quota unit the API's creation takes.
    expect(Number(await usage())).toBe(before + 1);
    expect((await owner.session.get(encoded.location!)).status).toBe(200);
  });

  it("a file over one part is multipart: parts in any order, a completion with one missing refused, then assembled", async () => {
    const bytes = randomBytes(8 * MiB + 1000);
    const upload = await created(owner, bytes.length);
    expect(upload.parts).toEqual([
      { partNumber: 1, size: 8 * MiB },
      { partNumber: 2, size: 1000 },
    ]);
    expect((await putPart(owner, upload.id, 2, bytes.subarray(8 * MiB))).status).toBe(200);
    const early = await complete(owner, upload.id);
    expect(early.status).toBe(409);
    expect(json(early)).toMatchObject({ error: "Conflict", message: expect.stringContaining("parts missing") });
    expect(json(early).message).toContain(": 1.");
    // Encoding an upload not complete is refused, and takes no unit.
    const notYet = await encode(owner, upload.id, "mp4_264_480p");
    expect(notYet.status).toBe(409);
    expect(notYet.html).toContain("This upload is not complete");

    expect((await putPart(owner, upload.id, 1, bytes.subarray(0, 8 * MiB))).status).toBe(200);
    const done = await complete(owner, upload.id);
    expect(done.status, done.html).toBe(200);
    expect(json(done).status).toBe("completed");
    expect(sha256((await stored(uploadKeyFor(owner.accountId, upload.id)))!)).toBe(sha256(bytes));
    // Once complete, a part is refused rather than sent to storage again.
    expect((await putPart(owner, upload.id, 1, bytes.subarray(0, 8 * MiB))).status).toBe(409);
  });

  it("the API reads the dashboard's upload as the account's own", async () => {
    const key = await owner.session.createKey("reads uploads");
    const upload = await created(owner, 10);
    expect((await putPart(owner, upload.id, 1, "0123456789")).status).toBe(200);
    expect(bodyOf(await api(key).getUpload(upload.id), 200)).toMatchObject({ status: "completed", size: 10 });
  });
});

describe("dashboard uploads › refusals", () => {
  it("without a session: the script hears 401 in the API's format; a page's form goes to sign-in", async () => {
    const stranger = new DashboardSession();
    const upload = await created(owner, 10);
    for (const res of [
      await stranger.post("/dashboard/uploads", { size: "10" }, JSON_ACCEPT),
      await stranger.put(`/dashboard/uploads/${upload.id}/parts/1`, "0123456789", JSON_ACCEPT),
      await stranger.post(`/dashboard/uploads/${upload.id}/complete`, {}, JSON_ACCEPT),
    ]) {
      expect(res.status).toBe(401);
      expect(json(res)).toEqual({ error: "Unauthorized", message: expect.stringContaining("sign in again") });
    }
    const form = await stranger.post(`/dashboard/uploads/${upload.id}/encode`, { preset: "mp4_264_480p" });
    expect([form.status, form.location]).toEqual([303, "/dashboard/signin"]);
    expect((await stranger.get("/dashboard/upload")).location).toBe("/dashboard/signin");
  });

  it("without the session's token, or with another, every step is refused with 403", async () => {
    const upload = await created(owner, 10);
    const other = await uploader();
    const refused = [
      await owner.session.post("/dashboard/uploads", { size: "10" }, JSON_ACCEPT),
      await owner.session.post("/dashboard/uploads", { _csrf: other.token, size: "10" }, JSON_ACCEPT),
      await owner.session.put(`/dashboard/uploads/${upload.id}/parts/1`, "0123456789", JSON_ACCEPT),
      await putPart(owner, upload.id, 1, "0123456789", other.token),
      await owner.session.post(`/dashboard/uploads/${upload.id}/complete`, {}, JSON_ACCEPT),
    ];
    for (const res of refused) {
      expect(res.status).toBe(403);
      expect(json(res).message).toContain("could not be verified");
    }
    const form = await owner.session.post(`/dashboard/uploads/${upload.id}/encode`, { preset: "mp4_264_480p" });
    expect(form.status).toBe(403);
    expect(form.html).toContain("could not be verified");
    expect(await stored(uploadKeyFor(owner.accountId, upload.id))).toBeNull();
  });

  it("another account's upload is 404 at every step, and nothing reaches its storage", async () => {
    const upload = await created(owner, 10);
    const other = await uploader();
    for (const res of [await putPart(other, upload.id, 1, "0123456789"), await complete(other, upload.id)]) {
      expect(res.status).toBe(404);
      expect(json(res)).toEqual({ error: "Not found", message: "Upload not found" });
    }
    const form = await encode(other, upload.id, "mp4_264_480p");
    expect(form.status).toBe(404);
    expect(form.html).toContain("Upload not found");
    expect(await stored(uploadKeyFor(owner.accountId, upload.id))).toBeNull();
  });

  it("a size over the plan's maximum is a 413 in the API's format, naming the limit", async () => {
    const res = await create(owner, { filename: "clip.mp4", size: String(1024 * MiB + 1) });
    expect(res.status).toBe(413);
    expect(json(res)).toEqual({
      error: "Payload too large",
      message: "The upload's size is over the Starter plan's maximum of 1 GiB (1073741824 bytes).",
    });
  });

  it("a part of another length than planned is refused before storage: larger 413, shorter 400", async () => {
    const upload = await created(owner, 10);
    const longer = await putPart(owner, upload.id, 1, "01234567890");
    expect(longer.status).toBe(413);
    expect(json(longer)).toMatchObject({ error: "Payload too large", message: expect.stringContaining("10 bytes") });
    const shorter = await putPart(owner, upload.id, 1, "012");
    expect(shorter.status).toBe(400);
    expect(json(shorter)).toMatchObject({ error: "Validation error", details: [{ field: "Content-Length" }] });
    expect(await stored(uploadKeyFor(owner.accountId, upload.id))).toBeNull();
  });

  it("an expired upload takes no part", async () => {
    const upload = await created(owner, 10);
    await admin.db
      .update(uploads)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(uploads.id, upload.id));
    const res = await putPart(owner, upload.id, 1, "0123456789");
    expect(res.status).toBe(409);
    expect(json(res).message).toContain("expired");
  });

  it("a preset off the catalogue or above the plan is refused on the page, and takes no unit", async () => {
    const upload = await created(owner, 10);
    expect((await putPart(owner, upload.id, 1, "0123456789")).status).toBe(200);
    const unknown = await encode(owner, upload.id, "mp4_999p");
    expect(unknown.status).toBe(400);
    expect(unknown.html).toContain("Unknown preset");
    const above = await encode(owner, upload.id, "mp4_264_1080p");
    expect(above.status).toBe(403);
    expect(above.html).toContain("not available on the Starter plan");
  });

  it("junk in every field and path is a 4xx, never a 500", async () => {
    const upload = await created(owner, 10);
    const fields: Record<string, string>[] = [
      {},
      { size: "" },
      { size: "abc" },
      { size: "-1" },
      { size: "0" },
      { size: "1.5" },
      { size: "1e400" },
      { size: "10", filename: "a/b.mp4" },
      { size: "10", filename: "x".repeat(300) },
      { size: "10", filename: "nul\u0000.mp4" },
      { size: "10", contentType: "not a type" },
    ];
    for (const f of fields) {
      const res = await create(owner, f);
      expect(res.status, JSON.stringify(f)).toBeGreaterThanOrEqual(400);
      expect(res.status, JSON.stringify(f)).toBeLessThan(500);
      expect(json(res).error, JSON.stringify(f)).toMatch(/Validation error|Bad request/);
    }
    for (const n of ["0", "2", "abc", "1e0", "01", "-1", "99999", "100000"]) {
      const res = await putPart(owner, upload.id, n, "0123456789");
      expect(res.status, n).toBe(404);
    }
    for (const id of ["junk", "00000000-0000-0000-0000-000000000000", "%00"]) {
      expect((await putPart(owner, id, 1, "0123456789")).status, id).toBe(404);
      expect((await complete(owner, id)).status, id).toBe(404);
      expect((await encode(owner, id, "mp4_264_480p")).status, id).toBe(404);
    }
    const noLength = await owner.session.put(`/dashboard/uploads/${upload.id}/parts/1`, "", {
      ...JSON_ACCEPT,
      "X-CSRF-Token": owner.token,
    });
    expect(noLength.status).toBe(400);
  });
});
