/**
 * Direct uploads (docs/uploads.md): the row, the storage calls, and the status a read sees. An
 * upload never touches a job: its `inputUrl` is a source URL like any other.
 */
import { and, asc, eq, lt, lte, sql } from "drizzle-orm";
import { accounts, type Upload, uploads } from "../../drizzle/schema";
import { isUuid } from "../../domain/ids";
import {
  MAX_PENDING_UPLOADS,
  MAX_UPLOAD_BYTES,
  type PlanId,
  UPLOAD_RETENTION_SECONDS,
  UPLOAD_STORAGE_BYTES,
} from "../../domain/plans";
import {
  inputLinkSeconds,
  type PlannedPart,
  partSizeFor,
  planParts,
  SINGLE_UPLOAD_MAX_BYTES,
  UPLOAD_URL_TTL_SECONDS,
  type UploadStatus,
  uploadKeyFor,
} from "../../domain/uploads";
import { describeError } from "../services/error-log";
import type { Services } from "../services";
import type { Database } from "../services/db";
import type { Storage, StoredPart } from "../services/storage";
import { pendingUploadsCapped, sizeOverPlan, uploadStorageFull } from "./refusals";

/** Whose upload it is: its account, and the plan whose limits it is made under. */
export interface Uploader {
  accountId: string;
  plan: PlanId;
}

export interface NewUpload {
  filename: string | null;
  /** The type the upload is stored as, already accepted (uploadTypeFor, isUploadType). */
  contentType: string;
  size: number;
}

/**
 * What an account's uploads hold now: the pending ones before their expiresAt (as declared), and
 * the completed ones until their deletion. `nextRelease` is when the first of them stops counting.
 */
export interface UploadHoldings {
  open: number;
  firstExpiry: Date | null;
  lastExpiry: Date | null;
  bytes: number;
  nextRelease: Date | null;
}

/** What a read of an upload shows: its row, its status as of now, and the URLs not spent. */
export interface UploadView {
  upload: Upload;
  status: UploadStatus;
  uploadUrl?: string;
  parts?: { partNumber: number; size: number; url: string }[];
  inputUrl?: string;
}

/** When the upload URLs were signed: expiresAt less their lifetime, so a read signs the very same URLs. */
const signedAtOf = (upload: Upload) => new Date(upload.expiresAt.getTime() - UPLOAD_URL_TTL_SECONDS * 1000);

const at = (date: Date) => sql`${date.toISOString()}::timestamptz`;

/** The account's uploads that hold bytes or URLs now, summed (UploadHoldings), as `held`'s one row. */
const heldBy = (accountId: string, now: Date) => {
  const open = sql`${uploads.status} = 'pending' and ${uploads.expiresAt} > ${at(now)}`;
  const kept = sql`${uploads.status} = 'completed' and ${uploads.deleteAt} > ${at(now)}`;
  return sql`held as (
    select count(*) filter (where ${open})::int as open,
      min(${uploads.expiresAt}) filter (where ${open}) as first_expiry,
      max(${uploads.expiresAt}) filter (where ${open}) as last_expiry,
      coalesce(sum(${uploads.size}) filter (where ${open} or ${kept}), 0)::bigint as bytes,
      min(case when ${open} then ${uploads.expiresAt} else ${uploads.deleteAt} end)
        filter (where ${open} or ${kept}) as next_release
    from ${uploads} where ${uploads.accountId} = ${accountId}::uuid
  )`;
};

/** `held`'s row as the driver gives it: a bigint as text, a timestamp as text or a Date. */
type HeldRow = {
  open: number;
  first_expiry: string | Date | null;
  last_expiry: string | Date | null;
  bytes: string | number;
  next_release: string | Date | null;
};

const dateOf = (value: string | Date | null) => (value === null ? null : new Date(value));

const holdingsOf = (row: HeldRow): UploadHoldings => ({
  open: Number(row.open),
  firstExpiry: dateOf(row.first_expiry),
  lastExpiry: dateOf(row.last_expiry),
  bytes: Number(row.bytes),
  nextRelease: dateOf(row.next_release),
});

/** What the account's uploads hold now (the dashboard's figures; the limits' refusals). */
export async function uploadHoldings(db: Database, accountId: string, now = new Date()): Promise<UploadHoldings> {
  const { rows } = await db.execute<HeldRow>(sql`with ${heldBy(accountId, now)} select * from held`);
  return holdingsOf(rows[0]);
}

/**
 * Inserts the upload only while the account is under its plan's pending cap and storage bound,
 * and answers what its uploads held when that was decided. The account's row is locked first,
 * in the same transaction, so concurrent creations are decided one after another, each on a
 * snapshot that holds the ones before it (a lock inside one statement would still count from
 * the snapshot the statement began with).
 */
async function insertWithinLimits(db: Database, upload: Upload, plan: PlanId, now: Date) {
  const lock = sql`select 1 from ${accounts} where ${accounts.id} = ${upload.accountId}::uuid for no key update`;
  const insert = sql`with ${heldBy(upload.accountId, now)},
    inserted as (
      insert into ${uploads} (id, account_id, key, filename, content_type, size, multipart_upload_id, part_size,
        status, created_at, expires_at, delete_at)
      select ${upload.id}::uuid, ${upload.accountId}::uuid, ${upload.key}, ${upload.filename}, ${upload.contentType},
        ${upload.size}::bigint, ${upload.multipartUploadId}, ${upload.partSize}::int, 'pending', ${at(upload.createdAt)},
        ${at(upload.expiresAt)}, ${at(upload.deleteAt)}
      from held
      where held.open < ${MAX_PENDING_UPLOADS[plan]}::int
        and held.bytes + ${upload.size}::bigint <= ${UPLOAD_STORAGE_BYTES[plan]}::bigint
      returning id
    )
    select held.*, exists (select 1 from inserted) as inserted from held`;
  const [, decided] = await db.batch([db.execute(lock), db.execute<HeldRow & { inserted: boolean }>(insert)]);
  const row = decided.rows[0];
  return { inserted: row.inserted, held: holdingsOf(row) };
}

/**
 * Creates the upload under the plan's limits: its size at most the plan's largest upload, the
 * account's pending uploads under their cap, its bytes within the storage bound. A multipart
 * upload (over `singleMaxBytes`: the single PUT's limit, or less for the dashboard's, which the
 * Worker relays) is begun in storage first, and aborted when the limits refuse it.
 */
export async function createUpload(
  services: Services,
  { accountId, plan }: Uploader,
  fields: NewUpload,
  { now = new Date(), singleMaxBytes = SINGLE_UPLOAD_MAX_BYTES } = {},
) {
  if (fields.size > MAX_UPLOAD_BYTES[plan]) throw sizeOverPlan(plan);
  const id = crypto.randomUUID();
  const key = uploadKeyFor(accountId, id);
  const multipart = fields.size > singleMaxBytes;
  const multipartUploadId = multipart ? await services.storage.createMultipart(key, fields.contentType) : null;
  const signedAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const upload: Upload = {
    id,
    accountId,
    key,
    ...fields,
    multipartUploadId,
    partSize: multipart ? partSizeFor(fields.size) : null,
    status: "pending",
    createdAt: now,
    expiresAt: new Date(signedAt.getTime() + UPLOAD_URL_TTL_SECONDS * 1000),
    completedAt: null,
    deleteAt: new Date(now.getTime() + UPLOAD_RETENTION_SECONDS[plan] * 1000),
  };
  const decided = await insertWithinLimits(services.db, upload, plan, now).catch(async (err: unknown) => {
    if (multipartUploadId) await abandonMultipart(services.storage, upload, multipartUploadId);
    throw err;
  });
  if (!decided.inserted) {
    if (multipartUploadId) await abandonMultipart(services.storage, upload, multipartUploadId);
    if (decided.held.open >= MAX_PENDING_UPLOADS[plan]) throw pendingUploadsCapped(plan, decided.held);
    throw uploadStorageFull(plan, fields.size, decided.held);
  }
  return view(services, upload, now);
}

/**
 * A multipart upload begun for an upload never recorded: aborted, and logged if storage refuses
 * (it holds no part, and no row leads the sweep to it).
 */
async function abandonMultipart(storage: Storage, upload: Upload, multipartUploadId: string) {
  try {
    await storage.abortMultipart(upload.key, multipartUploadId);
  } catch (err) {
    console.error(
      JSON.stringify({
        level: "error",
        msg: "uploads: a multipart upload begun for a refused upload was not aborted",
        uploadId: upload.id,
        error: describeError(err),
      }),
    );
  }
}

/** The caller's upload, or undefined for an unknown id, a malformed id, or another account's upload. */
export async function findOwnUpload(db: Database, accountId: string, id: string): Promise<Upload | undefined> {
  if (!isUuid(id)) return undefined;
  const [upload] = await db
    .select()
    .from(uploads)
    .where(and(eq(uploads.id, id), eq(uploads.accountId, accountId)))
    .limit(1);
  return upload;
}

async function markCompleted(db: Database, upload: Upload, size: number | null, now: Date): Promise<Upload> {
  const [updated] = await db
    .update(uploads)
    .set({ status: "completed", completedAt: now, size })
    .where(and(eq(uploads.id, upload.id), eq(uploads.status, "pending")))
    .returning();
  // Another request recorded it first: its row stands.
  return updated ?? { ...upload, status: "completed", completedAt: upload.completedAt ?? now, size };
}

/**
 * The status a read sees now: a pending upload past expiresAt is `expired`, a completed one
 * whose deletion is due is `deleted`, before the sweep stores either.
 */
function statusAt(upload: Upload, now: Date): UploadStatus {
  if (upload.status === "pending" && now >= upload.expiresAt) return "expired";
  if (upload.status === "completed" && inputLinkSeconds(upload.deleteAt, now) === 0) return "deleted";
  return upload.status;
}

/**
 * The upload as of now. A single upload completes itself: a read of a pending one asks storage
 * (a HEAD) and records what it finds, even past expiresAt, for a PUT begun before then.
 */
export async function readUpload(services: Services, upload: Upload, now = new Date()): Promise<UploadView> {
  if (upload.status === "pending" && upload.multipartUploadId === null) {
    const stored = await services.storage.sizeOf(upload.key);
    if (stored !== null) return view(services, await markCompleted(services.db, upload, stored, now), now);
  }
  return view(services, upload, now);
}

export type Completion =
  | { kind: "completed"; view: UploadView }
  | { kind: "single" }
  | { kind: "expired" }
  | { kind: "missing"; partNumbers: number[] };

/**
 * Completes a multipart upload from the parts storage lists, never from the client's word: each
 * planned part must be there with its planned size. A repeated completion finds the row
 * completed (or, racing the first, the upload gone from storage and the object there), and
 * answers the upload as a read does.
 */
export async function completeUpload(services: Services, upload: Upload, now = new Date()): Promise<Completion> {
  if (upload.status === "completed" || upload.status === "deleted")
    return { kind: "completed", view: await view(services, upload, now) };
  if (upload.status === "expired") return { kind: "expired" };
  const { multipartUploadId, partSize, size } = upload;
  if (multipartUploadId === null || partSize === null || size === null) return { kind: "single" };
  if (now >= upload.expiresAt) return { kind: "expired" };

  const listed = await services.storage.listParts(upload.key, multipartUploadId);
  if (listed === null) return completedElsewhere(services, upload, now);
  const byNumber = new Map(listed.map((part) => [part.partNumber, part]));
  const planned = planParts(size, partSize);
  const missing = planned.filter((p) => byNumber.get(p.partNumber)?.size !== p.size).map((p) => p.partNumber);
  if (missing.length > 0) return { kind: "missing", partNumbers: missing };

  const parts = planned.map((p) => byNumber.get(p.partNumber) as StoredPart);
  if (!(await services.storage.completeMultipart(upload.key, multipartUploadId, parts)))
    return completedElsewhere(services, upload, now);
  const completed = await markCompleted(services.db, upload, size, now);
  return { kind: "completed", view: await view(services, completed, now) };
}

/**
 * completeUpload for a multipart upload; a single one completes itself, so here it is what a
 * read finds: completed once its object is in storage, otherwise its one part missing.
 */
export async function finishUpload(services: Services, upload: Upload, now = new Date()): Promise<Completion> {
  if (upload.multipartUploadId !== null) return completeUpload(services, upload, now);
  const read = await readUpload(services, upload, now);
  if (read.status === "completed" || read.status === "deleted") return { kind: "completed", view: read };
  return read.status === "expired" ? { kind: "expired" } : { kind: "missing", partNumbers: [1] };
}

/** Storage no longer knows the multipart upload: completed by a request that raced this one, or aborted. */
async function completedElsewhere(services: Services, upload: Upload, now: Date): Promise<Completion> {
  const stored = await services.storage.sizeOf(upload.key);
  if (stored === null) throw new Error(`Upload ${upload.id}: storage has neither the multipart upload nor the object`);
  const completed = await markCompleted(services.db, upload, stored, now);
  return { kind: "completed", view: await view(services, completed, now) };
}

/** The pieces the upload's bytes are sent in: a single upload is part 1 of 1. */
export function plannedParts(upload: Upload): PlannedPart[] {
  const { multipartUploadId, partSize, size } = upload;
  if (size === null) return [];
  if (multipartUploadId === null) return [{ partNumber: 1, size }];
  return partSize === null ? [] : planParts(size, partSize);
}

/** A PUT's URL, and the headers signed into it that the PUT must carry. */
interface UploadTarget {
  url: string;
  headers: Record<string, string>;
}

/**
 * The single upload's PUT, the very one creation signed: its length and type signed, so it must
 * carry them as its Content-Length and Content-Type. Undefined for a row that predates both.
 */
async function signedSingle(storage: Storage, upload: Upload): Promise<UploadTarget | undefined> {
  const { size, contentType } = upload;
  if (size === null || contentType === null) return undefined;
  const link = await storage.signPut(upload.key, UPLOAD_URL_TTL_SECONDS, signedAtOf(upload), {
    contentLength: size,
    contentType,
  });
  return { url: link.url, headers: { "Content-Type": contentType } };
}

/** One part's PUT of a multipart upload, the very one creation signed (its length signed; the type is the upload's own). */
async function signedPart(storage: Storage, upload: Upload, uploadId: string, part: PlannedPart) {
  const link = await storage.signUploadPart(
    upload.key,
    { uploadId, ...part },
    UPLOAD_URL_TTL_SECONDS,
    signedAtOf(upload),
  );
  return { url: link.url, headers: {} };
}

/** Part `partNumber` of a pending upload with where its bytes go; undefined for a part the upload does not plan. */
export async function partTarget(services: Services, upload: Upload, partNumber: number) {
  const part = plannedParts(upload).find((p) => p.partNumber === partNumber);
  if (!part) return undefined;
  const { storage } = services;
  const { multipartUploadId } = upload;
  const target = multipartUploadId
    ? await signedPart(storage, upload, multipartUploadId, part)
    : await signedSingle(storage, upload);
  return target && { ...part, ...target };
}

/**
 * The URLs still of use: the upload URLs while pending (the same ones creation signed), and the
 * object's link while the object is kept, never signed to outlive its deletion.
 */
async function view(services: Services, upload: Upload, now: Date): Promise<UploadView> {
  const { storage } = services;
  const status = statusAt(upload, now);
  const shown: UploadView = { upload, status };
  if (status === "expired" || status === "deleted") return shown;
  if (status === "pending") {
    const { multipartUploadId } = upload;
    if (multipartUploadId === null) shown.uploadUrl = (await signedSingle(storage, upload))?.url;
    else
      shown.parts = await Promise.all(
        plannedParts(upload).map(async (part) => ({
          ...part,
          url: (await signedPart(storage, upload, multipartUploadId, part)).url,
        })),
      );
  }
  const linkSeconds = inputLinkSeconds(upload.deleteAt, now);
  if (linkSeconds > 0) shown.inputUrl = (await storage.signGet(upload.key, linkSeconds, now)).url;
  return shown;
}

/**
 * Past its expiresAt, a PUT begun before the deadline may still be arriving: the sweep leaves a
 * pending upload this long before it settles it.
 */
const ABANDONED_AFTER_MS = 60 * 60_000;
/** Uploads one sweep settles, and deletes, at most in each step; the next sweep takes the rest. */
const UPLOADS_PER_SWEEP = 100;

/** A failure on one upload in the sweep: logged, and left for the next sweep. */
function logSweepFailure(msg: string, uploadId: string, err: unknown) {
  console.error(JSON.stringify({ level: "error", msg, uploadId, error: describeError(err) }));
}

/**
 * Uploads left pending past their expiresAt (and ABANDONED_AFTER_MS): a multipart upload is
 * aborted in storage, its parts deleted, and the row stored `expired`; a single upload whose
 * PUT did arrive is recorded `completed`, as a read would; one that never arrived is stored
 * `expired`.
 */
async function settleAbandonedUploads(services: Services, now: Date) {
  const { db, storage } = services;
  const abandoned = await db
    .select()
    .from(uploads)
    .where(and(eq(uploads.status, "pending"), lt(uploads.expiresAt, new Date(now.getTime() - ABANDONED_AFTER_MS))))
    .orderBy(asc(uploads.expiresAt))
    .limit(UPLOADS_PER_SWEEP);
  let expired = 0;
  let failed = 0;
  for (const upload of abandoned) {
    try {
      if (upload.multipartUploadId === null) {
        const stored = await storage.sizeOf(upload.key);
        if (stored !== null) {
          await markCompleted(db, upload, stored, now);
          continue;
        }
      } else await storage.abortMultipart(upload.key, upload.multipartUploadId);
      await db
        .update(uploads)
        .set({ status: "expired" })
        .where(and(eq(uploads.id, upload.id), eq(uploads.status, "pending")));
      expired += 1;
    } catch (err) {
      failed += 1;
      logSweepFailure("sweep: an abandoned upload was not settled; the next sweep tries again", upload.id, err);
    }
  }
  return { expired, failed };
}

/**
 * Completed uploads at their deleteAt, the plan's retention over: the object is deleted from
 * storage first, then the row stored `deleted`, so no row reads as kept once its object is gone.
 */
async function deleteRetainedUploads(services: Services, now: Date) {
  const { db, storage } = services;
  const due = await db
    .select({ id: uploads.id, key: uploads.key })
    .from(uploads)
    .where(and(eq(uploads.status, "completed"), lte(uploads.deleteAt, now)))
    .orderBy(asc(uploads.deleteAt))
    .limit(UPLOADS_PER_SWEEP);
  let deleted = 0;
  let failed = 0;
  for (const upload of due) {
    try {
      await storage.deleteObject(upload.key);
      await db
        .update(uploads)
        .set({ status: "deleted" })
        .where(and(eq(uploads.id, upload.id), eq(uploads.status, "completed")));
      deleted += 1;
    } catch (err) {
      failed += 1;
      logSweepFailure(
        "sweep: a completed upload due for deletion was not deleted; the next sweep tries again",
        upload.id,
        err,
      );
    }
  }
  return { deleted, failed };
}

/**
 * The sweep's step for uploads: the abandoned ones settled, then the completed ones past their
 * retention deleted. A failure on one is logged and left for the next sweep.
 */
export async function sweepUploads(services: Services, now = new Date()) {
  const settled = await settleAbandonedUploads(services, now);
  const removed = await deleteRetainedUploads(services, now);
  return { expired: settled.expired, deleted: removed.deleted, failed: settled.failed + removed.failed };
}
