/** Direct uploads (docs/uploads.md): limits, part sizes and keys both sides agree on. */

const MiB = 1024 * 1024;

/** An upload of at most this many bytes is one presigned PUT; a larger one is multipart. */
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

export const UPLOAD_STATUSES = ["pending", "completed", "expired", "deleted"] as const;
export type UploadStatus = (typeof UPLOAD_STATUSES)[number];

/**
 * The link to an upload's object a read signs: 7 days at most, and never past the object's
 * deletion (`deleteAt`). Whole seconds down, as S3 counts X-Amz-Expires from the signing second;
 * 0 once the deletion is due.
 */
export function inputLinkSeconds(deleteAt: Date, now: Date): number {
  return Math.max(0, Math.min(UPLOAD_INPUT_TTL_SECONDS, Math.floor((deleteAt.getTime() - now.getTime()) / 1000)));
}

/**
 * The media types an upload may be stored as: what a job reads (any video or audio type, the
 * overlay images) and the caption files. None of them is a document a browser runs.
 */
const EXACT_UPLOAD_TYPES = ["image/png", "image/jpeg", "text/vtt", "application/x-subrip"] as const;

/** The accepted types in words, for the refusal and the documentation. */
export const UPLOAD_TYPES_TEXT = "video/*, audio/*, image/png, image/jpeg, text/vtt or application/x-subrip";

/** `type/subtype` in RFC 6838's restricted-name characters, no parameters. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

/** Whether an upload may be stored as `type` (lower case, as uploadTypeFor gives it). */
export function isUploadType(type: string): boolean {
  if (!MEDIA_TYPE.test(type)) return false;
  return /^(video|audio)\//.test(type) || (EXACT_UPLOAD_TYPES as readonly string[]).includes(type);
}

/** The type a file's extension names, for the extensions of the media and captions a job reads. */
const TYPE_BY_EXTENSION: Record<string, string> = {
  mp4: "video/mp4",
  m4v: "video/mp4",
  mov: "video/quicktime",
  mkv: "video/x-matroska",
  webm: "video/webm",
  avi: "video/x-msvideo",
  mpg: "video/mpeg",
  mpeg: "video/mpeg",
  ts: "video/mp2t",
  mts: "video/mp2t",
  "3gp": "video/3gpp",
  flv: "video/x-flv",
  ogv: "video/ogg",
  wmv: "video/x-ms-wmv",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  aac: "audio/aac",
  wav: "audio/wav",
  flac: "audio/flac",
  ogg: "audio/ogg",
  oga: "audio/ogg",
  opus: "audio/opus",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  vtt: "text/vtt",
  srt: "application/x-subrip",
};

/**
 * The type an upload is stored and signed as: the one given, in lower case; when none is given
 * (or only `application/octet-stream`, what many tools send for any file), the one the
 * filename's extension names. Undefined when neither says; whether it is accepted is isUploadType.
 */
export function uploadTypeFor(contentType: string | undefined, filename: string | undefined): string | undefined {
  const given = contentType?.toLowerCase();
  if (given !== undefined && given !== "application/octet-stream") return given;
  const extension = /\.([A-Za-z0-9]+)$/.exec(filename ?? "")?.[1]?.toLowerCase();
  return extension !== undefined && Object.hasOwn(TYPE_BY_EXTENSION, extension)
    ? TYPE_BY_EXTENSION[extension]
    : undefined;
}

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
