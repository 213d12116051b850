/**
 * The dashboard's upload (docs/dashboard.md#uploading-a-file): the page, then the steps its
 * script takes, each on the session and its token, for the session's account only. The file's
 * bytes pass through the Worker part by part to the part's presigned URL, so the browser talks to
 * this origin alone; the encode is a form like the others.
 */
import { Hono, type Context } from "hono";
import {
  MAX_PENDING_UPLOADS,
  MAX_UPLOAD_BYTES,
  UPLOAD_RETENTION_SECONDS,
  UPLOAD_STORAGE_BYTES,
} from "../../../domain/plans";
import { findPreset, PRESETS } from "../../../domain/presets/catalogue";
import { presentPreset } from "../../../domain/presets/view";
import { RELAYED_SINGLE_MAX_BYTES } from "../../../domain/uploads";
import { ApiError } from "../../errors";
import { createQueuedJob } from "../../lib/create-job";
import { toDetails } from "../../lib/json-body";
import { completionRefusal, unknownPreset, uploadExpired, uploadNotFound } from "../../lib/refusals";
import { createUpload, findOwnUpload, finishUpload, partTarget, plannedParts, uploadHoldings } from "../../lib/uploads";
import { createUploadBody, storedTypeOf } from "../../routes/uploads/schema";
import { me, type DashboardEnv } from "../context";
import { UploadPage } from "../pages/upload";
import { renderPage } from "../pages/render";
import { paths } from "../paths";

type Ctx = Context<DashboardEnv>;

/** Part numbers as S3 has them, 1 to 10,000; anything else in the path is no part of any upload. */
const PART_NUMBER = /^[1-9]\d{0,4}$/;

/** The form's text field `name`, or undefined when absent or empty (a browser sends no type for some files). */
async function field(c: Ctx, name: string): Promise<string | undefined> {
  const value = (await c.req.parseBody())[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The session's account's upload `:id`; another account's is as unknown as a made-up id. */
async function ownUpload(c: Ctx) {
  const upload = await findOwnUpload(c.get("services").db, me(c).account.id, c.req.param("id") ?? "");
  if (!upload) throw uploadNotFound();
  return upload;
}

/** A part's body must be exactly the part's planned length, given up front: the length is signed into its URL. */
function lengthRefusal(sent: string | undefined, part: { partNumber: number; size: number }) {
  if (sent === String(part.size)) return undefined;
  const planned = `part ${part.partNumber} is ${part.size} bytes`;
  if (sent !== undefined && Number(sent) > part.size)
    return ApiError.payloadTooLarge(`The body is larger than the upload planned: ${planned}.`);
  return ApiError.validation([{ field: "Content-Length", message: `must be given, and ${planned}` }]);
}

export const uploadRoutes = new Hono<DashboardEnv>()
  .get("/upload", async (c) => {
    const { account, csrfToken } = me(c);
    const { plan } = account;
    const presets = PRESETS.map((p) => presentPreset(p, plan)).filter((p) => p.available);
    const limits = {
      maxBytes: MAX_UPLOAD_BYTES[plan],
      storageBytes: UPLOAD_STORAGE_BYTES[plan],
      maxPending: MAX_PENDING_UPLOADS[plan],
      retentionDays: UPLOAD_RETENTION_SECONDS[plan] / 86_400,
    };
    const held = await uploadHoldings(c.get("services").db, account.id);
    return renderPage(c, {
      title: "Upload a file",
      body: <UploadPage csrf={csrfToken} presets={presets} limits={limits} held={held} />,
    });
  })
  .post("/uploads", async (c) => {
    const { account } = me(c);
    const size = await field(c, "size");
    const parsed = createUploadBody.safeParse({
      filename: await field(c, "filename"),
      contentType: await field(c, "contentType"),
      size: size === undefined ? undefined : Number(size),
    });
    if (!parsed.success) throw ApiError.validation(toDetails(parsed.error));
    const fields = parsed.data;
    const created = await createUpload(
      c.get("services"),
      { accountId: account.id, plan: account.plan },
      { filename: fields.filename ?? null, contentType: storedTypeOf(fields), size: fields.size },
      { singleMaxBytes: RELAYED_SINGLE_MAX_BYTES },
    );
    return c.json({ id: created.upload.id, parts: plannedParts(created.upload) }, 201);
  })
  .put("/uploads/:id/parts/:partNumber", async (c) => {
    const upload = await ownUpload(c);
    if (upload.status === "completed") throw ApiError.conflict("This upload is complete already.");
    if (upload.status === "expired" || new Date() >= upload.expiresAt) throw uploadExpired();
    const number = c.req.param("partNumber");
    const part = PART_NUMBER.test(number) ? await partTarget(c.get("services"), upload, Number(number)) : undefined;
    if (!part) throw ApiError.notFound("This upload has no such part.");
    const refused = lengthRefusal(c.req.header("Content-Length"), part);
    if (refused) throw refused;
    // Streamed on as it arrives, never held whole. Through a FixedLengthStream, the PUT carries
    // the Content-Length signed into its URL however the request's body reached the Worker (in
    // `npm run dev`, through a stream of unknown length), and a body of another length fails it.
    const relayed = new FixedLengthStream(part.size);
    c.req.raw.body?.pipeTo(relayed.writable).catch(() => undefined);
    let stored: Response;
    try {
      stored = await fetch(part.url, { method: "PUT", body: relayed.readable, headers: part.headers });
    } catch {
      throw ApiError.serviceUnavailable(`Part ${part.partNumber} did not reach storage whole: send it again.`);
    }
    await stored.body?.cancel();
    if (!stored.ok)
      throw ApiError.serviceUnavailable(`Storage refused part ${part.partNumber} (${stored.status}): send it again.`);
    return c.json({ partNumber: part.partNumber, size: part.size }, 200);
  })
  .post("/uploads/:id/complete", async (c) => {
    const completion = await finishUpload(c.get("services"), await ownUpload(c));
    if (completion.kind !== "completed") throw completionRefusal(completion);
    const { upload } = completion.view;
    return c.json({ id: upload.id, status: completion.view.status, size: upload.size }, 200);
  })
  .post("/uploads/:id/encode", async (c) => {
    const { account } = me(c);
    const services = c.get("services");
    const upload = await ownUpload(c);
    const requested = (await field(c, "preset")) ?? "";
    const preset = findPreset(requested);
    if (!preset) throw unknownPreset(requested);
    const finished = await finishUpload(services, upload);
    if (finished.kind !== "completed" || !finished.view.inputUrl)
      throw ApiError.conflict("This upload is not complete, or its file is deleted: upload the file again.");
    // The API's own creation, so the plan, the quota and the queue's rules are the same (lib/create-job.ts).
    const caller = { accountId: account.id, keyId: null, plan: account.plan, webhookUrl: account.webhookUrl };
    const job = await createQueuedJob(services, { caller }, { preset, inputUrl: finished.view.inputUrl });
    return c.redirect(paths.job(job.id), 303);
  });
