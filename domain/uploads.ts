/** Direct uploads (docs/uploads.md): limits, part sizes and keys both sides agree on. */

const MiB = 1024 * 1024;

/** An upload of at most this many bytes (or of no declared size) is one presigned PUT; a larger one is multipart. */
export const SINGLE_UPLOAD_MAX_BYTES = 100 * MiB;

/** The smallest part the service plans: over R2's 5 MiB floor, and few enough requests for a large file. */
const MIN_PART_BYTES = 8 * MiB;

/**
 * The dashboard's uploads pass through the Worker (docs/dashboard.md#uploading-a-file): one over
 * a part's size is multipart, so no request the Worker relays holds more than one part, far
 * below what Cloudflare lets a request carry.
 */
export const RELAYED_SINGLE_MAX_BYTES = MIN_PART_BYTES;

/** S3's and R2's ceiling on the parts of one multipart upload. */
const MAX_PARTS = 10_000;

/** How long the upload URLs work; an upload not completed by then is abandoned (`expired`). */
export const UPLOAD_URL_TTL_SECONDS = 24 * 60 * 60;

/** The link to the uploaded object a job reads: 7 days, the ceiling of any link (docs/contract.md §9.1). */
export const UPLOAD_INPUT_TTL_SECONDS = 7 * 24 * 60 * 60;

export const UPLOAD_STATUSES = ["pending", "completed", "expired"] as const;
export type UploadStatus = (typeof UPLOAD_STATUSES)[number];

/** The object's key: ids only, nothing of the client's filename. */
export function uploadKeyFor(accountId: string, uploadId: string): string {
  return `uploads/${accountId}/${uploadId}/source`;
}

export interface PlannedPart {
  partNumber: number;
  size: number;
}

/**
 * The part size for a multipart upload of `size` bytes: whole MiB, at least MIN_PART_BYTES, and
 * large enough that MAX_PARTS parts hold the file.
 */
export function partSizeFor(size: number): number {
  return Math.max(MIN_PART_BYTES, Math.ceil(size / MAX_PARTS / MiB) * MiB);
}

/** Every part of `partSize` bytes but the last, which holds the rest: what R2 requires of a multipart upload. */
export function planParts(size: number, partSize: number): PlannedPart[] {
  const count = Math.ceil(size / partSize);
  return Array.from({ length: count }, (_, i) => ({
    partNumber: i + 1,
    size: i === count - 1 ? size - partSize * (count - 1) : partSize,
  }));
}
