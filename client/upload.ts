import { NetworkError, UploadError } from "./errors";
import type { CreateUploadRequest, Upload } from "./types";

/** What one upload has sent so far, of how much. */
export interface UploadProgress {
  sentBytes: number;
  totalBytes: number;
}

export interface UploadOptions {
  /** The file's name, kept with the upload for you (never part of its storage key). Default: a File's name. */
  filename?: string;
  /** Default: the Blob's type, if it has one. */
  contentType?: string;
  /** Called after each part (and once at the end of a single upload). */
  onProgress?: (progress: UploadProgress) => void;
  /** Aborting it stops the transfer; the upload is left pending, and the service abandons it at its expiry. */
  signal?: AbortSignal;
  /** Parts sent at once in a multipart upload. Default 4. */
  concurrency?: number;
}

/** The API calls an upload makes, as the typed client answers them. */
export interface UploadCalls {
  createUpload(body: CreateUploadRequest, o: { signal?: AbortSignal }): Promise<Upload>;
  getUpload(id: string, o: { signal?: AbortSignal }): Promise<Upload>;
  completeUpload(id: string, o: { signal?: AbortSignal }): Promise<Upload>;
}

const PART_TRIES = 3;
const RETRY_DELAY_MS = 500;

const wait = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/**
 * One PUT of `body` to a presigned URL, tried again alone (up to PART_TRIES) when storage answers
 * 5xx or does not answer; its 4xx (a refused signature, a link past its expiry) is final.
 */
async function putTried(
  fetchFn: typeof fetch,
  url: string,
  body: Blob,
  part: number | null,
  signal?: AbortSignal,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let failure: UploadError | NetworkError;
    try {
      const res = await fetchFn(url, { method: "PUT", body, signal });
      await res.body?.cancel();
      if (res.ok) return;
      failure = new UploadError(res.status, part);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      failure = new NetworkError(err);
    }
    if (!failure.retryable || attempt >= PART_TRIES) throw failure;
    await wait(RETRY_DELAY_MS * 2 ** (attempt - 1), signal);
  }
}

/**
 * A direct upload (docs/uploads.md): the upload created, then one PUT, or each part PUT from its
 * own slice of the Blob (a few at a time, each tried again alone), then completed. A file-backed
 * Blob (a browser's File, Node's `fs.openAsBlob`) is read a part at a time, so memory stays
 * bounded by the parts in flight whatever the file's size.
 */
export async function uploadBlob(
  calls: UploadCalls,
  fetchFn: typeof fetch,
  source: Blob | Uint8Array<ArrayBuffer>,
  o: UploadOptions = {},
): Promise<Upload> {
  const blob = source instanceof Blob ? source : new Blob([source]);
  const filename = o.filename ?? (typeof File !== "undefined" && blob instanceof File ? blob.name : undefined);
  const contentType = o.contentType ?? (blob.type || undefined);
  const signal = o.signal;
  const created = await calls.createUpload({ filename, contentType, size: blob.size }, { signal });
  const totalBytes = blob.size;
  if (created.uploadUrl) {
    await putTried(fetchFn, created.uploadUrl, blob, null, signal);
    o.onProgress?.({ sentBytes: totalBytes, totalBytes });
    // A single upload completes itself: the read finds the object and records it.
    return calls.getUpload(created.id, { signal });
  }
  const parts = created.parts ?? [];
  const partSize = created.partSize ?? 0;
  let sentBytes = 0;
  let next = 0;
  // Once a part has failed for good the upload has: the other lanes take no further part.
  let failed = false;
  const lane = async () => {
    while (!failed && next < parts.length) {
      const part = parts[next++];
      const start = (part.partNumber - 1) * partSize;
      try {
        await putTried(fetchFn, part.url, blob.slice(start, start + part.size), part.partNumber, signal);
      } catch (err) {
        failed = true;
        throw err;
      }
      sentBytes += part.size;
      o.onProgress?.({ sentBytes, totalBytes });
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency ?? 4, parts.length) }, lane));
  return calls.completeUpload(created.id, { signal });
}
