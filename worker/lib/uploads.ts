/**
 * Direct uploads (docs/uploads.md): the row, the storage calls, and the status a read sees. An
 * upload never touches a job: its `inputUrl` is a source URL like any other.
 */
import { and, asc, eq, lt } from "drizzle-orm";
import { type Upload, uploads } from "../../drizzle/schema";
import { isUuid } from "../../domain/ids";
import {
  type PlannedPart,
  partSizeFor,
  planParts,
  SINGLE_UPLOAD_MAX_BYTES,
  UPLOAD_INPUT_TTL_SECONDS,
  UPLOAD_URL_TTL_SECONDS,
  type UploadStatus,
  uploadKeyFor,
} from "../../domain/uploads";
import { describeError } from "../errors";
import type { Services } from "../services";
import type { Database } from "../services/db";
import type { Storage, StoredPart } from "../services/storage";

export interface NewUpload {
  filename: string | null;
  contentType: string | null;
  size: number | null;
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

/**
 * Creates the upload: a multipart upload in storage first when the file is over `singleMaxBytes`
 * (the single PUT's limit, or less for the dashboard's, which the Worker relays).
 */
export async function createUpload(
  services: Services,
  accountId: string,
  fields: NewUpload,
  { now = new Date(), singleMaxBytes = SINGLE_UPLOAD_MAX_BYTES } = {},
) {
  const id = crypto.randomUUID();
  const key = uploadKeyFor(accountId, id);
  const multipart = fields.size !== null && fields.size > singleMaxBytes;
  const multipartUploadId = multipart ? await services.storage.createMultipart(key, fields.contentType) : null;
  const signedAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const [upload] = await services.db
    .insert(uploads)
    .values({
      id,
      accountId,
      key,
      ...fields,
      multipartUploadId,
      partSize: multipart && fields.size !== null ? partSizeFor(fields.size) : null,
      createdAt: now,
      expiresAt: new Date(signedAt.getTime() + UPLOAD_URL_TTL_SECONDS * 1000),
    })
    .returning();
  return view(services, upload, "pending", now);
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
 * The upload as of now. A single upload completes itself: a read of a pending one asks storage
 * (a HEAD) and records what it finds, even past expiresAt, for a PUT begun before then. A
 * pending upload past expiresAt is `expired`; nothing is written for that (the sweep's work).
 */
export async function readUpload(services: Services, upload: Upload, now = new Date()): Promise<UploadView> {
  if (upload.status !== "pending") return view(services, upload, upload.status, now);
  if (upload.multipartUploadId === null) {
    const stored = await services.storage.sizeOf(upload.key);
    if (stored !== null) return view(services, await markCompleted(services.db, upload, stored, now), "completed", now);
  }
  return view(services, upload, now >= upload.expiresAt ? "expired" : "pending", now);
}

export type Completion =
  | { kind: "completed"; view: UploadView }
  | { kind: "single" }
  | { kind: "expired" }
  | { kind: "missing"; partNumbers: number[] };

/**
 * Completes a multipart upload from the parts storage lists, never from the client's word: each
 * planned part must be there with its planned size. A repeated completion finds the row
 * completed (or, racing the first, the upload gone from storage and the object there).
 */
export async function completeUpload(services: Services, upload: Upload, now = new Date()): Promise<Completion> {
  if (upload.status === "completed") return { kind: "completed", view: await view(services, upload, "completed", now) };
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
  return { kind: "completed", view: await view(services, completed, "completed", now) };
}

/**
 * completeUpload for a multipart upload; a single one completes itself, so here it is what a
 * read finds: completed once its object is in storage, otherwise its one part missing.
 */
export async function finishUpload(services: Services, upload: Upload, now = new Date()): Promise<Completion> {
  if (upload.multipartUploadId !== null) return completeUpload(services, upload, now);
  const read = await readUpload(services, upload, now);
  if (read.status === "completed") return { kind: "completed", view: read };
  return read.status === "expired" ? { kind: "expired" } : { kind: "missing", partNumbers: [1] };
}

/** Storage no longer knows the multipart upload: completed by a request that raced this one, or aborted. */
async function completedElsewhere(services: Services, upload: Upload, now: Date): Promise<Completion> {
  const stored = await services.storage.sizeOf(upload.key);
  if (stored === null) throw new Error(`Upload ${upload.id}: storage has neither the multipart upload nor the object`);
  const completed = await markCompleted(services.db, upload, stored, now);
  return { kind: "completed", view: await view(services, completed, "completed", now) };
}

/** The pieces the upload's bytes are sent in: a single upload of a declared size is part 1 of 1; one of no size has none to plan. */
export function plannedParts(upload: Upload): PlannedPart[] {
  const { multipartUploadId, partSize, size } = upload;
  if (size === null) return [];
  if (multipartUploadId === null) return [{ partNumber: 1, size }];
  return partSize === null ? [] : planParts(size, partSize);
}

/** The single upload's PUT, the very one creation signed (its length signed too when declared). */
const signedSingle = (storage: Storage, upload: Upload) =>
  storage.signPut(upload.key, UPLOAD_URL_TTL_SECONDS, signedAtOf(upload), upload.size ?? undefined);

/** One part's PUT of a multipart upload, the very one creation signed. */
const signedPart = (storage: Storage, upload: Upload, uploadId: string, part: PlannedPart) =>
  storage.signUploadPart(upload.key, { uploadId, ...part }, UPLOAD_URL_TTL_SECONDS, signedAtOf(upload));

/** Part `partNumber` of a pending upload with the URL its bytes go to; undefined for a part the upload does not plan. */
export async function partTarget(services: Services, upload: Upload, partNumber: number) {
  const part = plannedParts(upload).find((p) => p.partNumber === partNumber);
  if (!part) return undefined;
  const { storage } = services;
  const { multipartUploadId } = upload;
  const link = multipartUploadId
    ? await signedPart(storage, upload, multipartUploadId, part)
    : await signedSingle(storage, upload);
  return { ...part, url: link.url };
}

/** The URLs still of use: the upload URLs while pending (the same ones creation signed), the object's link unless expired. */
async function view(services: Services, upload: Upload, status: UploadStatus, now: Date): Promise<UploadView> {
  const { storage } = services;
  const shown: UploadView = { upload, status };
  if (status === "expired") return shown;
  if (status === "pending") {
    const { multipartUploadId } = upload;
    if (multipartUploadId === null) shown.uploadUrl = (await signedSingle(storage, upload)).url;
    else
      shown.parts = await Promise.all(
        plannedParts(upload).map(async (part) => ({
          ...part,
          url: (await signedPart(storage, upload, multipartUploadId, part)).url,
        })),
      );
  }
  shown.inputUrl = (await storage.signGet(upload.key, UPLOAD_INPUT_TTL_SECONDS, now)).url;
  return shown;
}

/**
 * Past its expiresAt, a PUT begun before the deadline may still be arriving: the sweep leaves a
 * pending upload this long before it settles it.
 */
const ABANDONED_AFTER_MS = 60 * 60_000;
/** Uploads one sweep settles at most; the next sweep takes the rest. */
const ABANDONED_PER_SWEEP = 100;

/**
 * The sweep's step for uploads left pending past their expiresAt (and ABANDONED_AFTER_MS): a
 * multipart upload is aborted in storage, its parts deleted, and the row stored `expired`; a
 * single upload whose PUT did arrive is recorded `completed`, as a read would; one that never
 * arrived is stored `expired`. A failure on one is logged and left for the next sweep.
 */
export async function settleAbandonedUploads(services: Services, now = new Date()) {
  const { db, storage } = services;
  const abandoned = await db
    .select()
    .from(uploads)
    .where(and(eq(uploads.status, "pending"), lt(uploads.expiresAt, new Date(now.getTime() - ABANDONED_AFTER_MS))))
    .orderBy(asc(uploads.expiresAt))
    .limit(ABANDONED_PER_SWEEP);
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
      console.error(
        JSON.stringify({
          level: "error",
          msg: "sweep: an abandoned upload was not settled; the next sweep tries again",
          uploadId: upload.id,
          error: describeError(err),
        }),
      );
    }
  }
  return { expired, failed };
}
