import { NetworkError, UploadError } from "./errors";
import type { CreateUploadRequest, Upload } from "./types";
import { sleep } from "./wait";

/** What one upload has sent so far, of how much. */
export interface UploadProgress {
  sentBytes: number;
  totalBytes: number;
}

export interface UploadOptions {
  /**
   * The file's name, kept with the upload for you (never part of its storage key); without a
   * contentType, the service takes the type from its extension. Default: a File's name.
   */
  filename?: string;
  /** The stream's length in bytes: required for a stream, which must hold exactly that many. */
  size?: number;
  /**
   * A video or audio type, image/png, image/jpeg, text/vtt or application/x-subrip (docs/uploads.md).
   * Default: the Blob's type, if it has one; else the service names it from `filename`.
   */
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

/**
 * One PUT of `body` to a presigned URL, tried again alone (up to PART_TRIES) when storage answers
 * 5xx or does not answer; its 4xx (a refused signature, a link past its expiry) is final.
 * `headers` are the ones signed into the URL.
 */
async function putTried(
  fetchFn: typeof fetch,
  url: string,
  body: Blob,
  part: number | null,
  { signal, headers }: { signal?: AbortSignal; headers?: Record<string, string> },
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let failure: UploadError | NetworkError;
    try {
      const res = await fetchFn(url, { method: "PUT", body, signal, headers });
      await res.body?.cancel();
      if (res.ok) return;
      failure = new UploadError(res.status, part);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      failure = new NetworkError(err);
    }
    if (!failure.retryable || attempt >= PART_TRIES) throw failure;
    await sleep(RETRY_DELAY_MS * 2 ** (attempt - 1), signal);
  }
}

/** What `upload` takes: a Blob or File, bytes, or a stream of known `size`. */
export type UploadSource = Blob | Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** A stream's chunks, through a web stream's reader where it cannot be iterated (some browsers). */
async function* chunksOf(stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (Symbol.asyncIterator in stream) {
    yield* stream as AsyncIterable<Uint8Array>;
    return;
  }
  const reader = (stream as ReadableStream<Uint8Array>).getReader();
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) yield r.value;
  } finally {
    reader.releaseLock();
  }
}

/**
 * The stream cut into pieces of exactly `sizes`, in order, each gathered whole (a part must be
 * held to be sent again); a stream shorter or longer than their sum is an error.
 */
async function* piecesOf(
  stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  sizes: number[],
): AsyncGenerator<Uint8Array<ArrayBuffer>> {
  const total = sizes.reduce((a, b) => a + b, 0);
  let read = 0;
  let piece = 0;
  let filled = 0;
  let buffer = new Uint8Array(new ArrayBuffer(sizes[0] ?? 0));
  for await (const chunk of chunksOf(stream)) {
    read += chunk.length;
    if (read > total) throw new TypeError(`The stream holds more than its size, ${total} bytes`);
    for (let at = 0; at < chunk.length; ) {
      const taken = Math.min(chunk.length - at, buffer.length - filled);
      buffer.set(chunk.subarray(at, at + taken), filled);
      filled += taken;
      at += taken;
      if (filled === buffer.length) {
        yield buffer;
        piece += 1;
        filled = 0;
        buffer = new Uint8Array(new ArrayBuffer(sizes[piece] ?? 0));
      }
    }
  }
  if (read < total) throw new TypeError(`The stream ended after ${read} bytes, before its size, ${total} bytes`);
}

/** A stream of `size` bytes gathered whole, its length checked to the end. */
async function wholeOf(stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>, size: number) {
  const pieces: Uint8Array<ArrayBuffer>[] = [];
  for await (const piece of piecesOf(stream, [size])) pieces.push(piece);
  return new Blob(pieces);
}

/**
 * A direct upload (docs/uploads.md): the upload created, then one PUT, or each part PUT (a few at
 * a time, each tried again alone), then completed. A Blob's part is its own slice, read as it is
 * sent: a file-backed Blob (a browser's File, Node's `fs.openAsBlob`) keeps memory bounded by the
 * parts in flight whatever the file's size. A stream's parts are gathered in order, one at a time,
 * so memory holds the parts in flight (and a single upload's whole body, at most 100 MiB).
 */
export async function upload(
  calls: UploadCalls,
  fetchFn: typeof fetch,
  source: UploadSource,
  o: UploadOptions = {},
): Promise<Upload> {
  const signal = o.signal;
  const stream = source instanceof Blob || source instanceof Uint8Array ? null : source;
  const blob = stream ? null : source instanceof Blob ? source : new Blob([source as Uint8Array<ArrayBuffer>]);
  const totalBytes = blob ? blob.size : o.size;
  if (totalBytes === undefined || !Number.isSafeInteger(totalBytes) || totalBytes < 1)
    throw new TypeError("A stream's upload needs its size: pass { size } in bytes");
  const filename = o.filename ?? (typeof File !== "undefined" && blob instanceof File ? blob.name : undefined);
  const contentType = o.contentType ?? (blob?.type || undefined);
  const created = await calls.createUpload({ filename, contentType, size: totalBytes }, { signal });
  if (created.uploadUrl) {
    const body = blob ?? (await wholeOf(stream as ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>, totalBytes));
    // The single PUT's type is signed: it is sent as the type the service stored (perhaps named from the filename).
    const headers = created.contentType ? { "Content-Type": created.contentType } : undefined;
    await putTried(fetchFn, created.uploadUrl, body, null, { signal, headers });
    o.onProgress?.({ sentBytes: totalBytes, totalBytes });
    // A single upload completes itself: the read finds the object and records it.
    return calls.getUpload(created.id, { signal });
  }
  const parts = created.parts ?? [];
  const partSize = created.partSize ?? 0;
  const pieces = stream
    ? piecesOf(
        stream,
        parts.map((p) => p.size),
      )
    : null;
  // A Blob's part is its slice; a stream's, the next piece (an async generator hands them out in order).
  const bodyOf = async (part: (typeof parts)[number]): Promise<Blob> => {
    if (blob) return blob.slice((part.partNumber - 1) * partSize, (part.partNumber - 1) * partSize + part.size);
    const piece = await (pieces as AsyncGenerator<Uint8Array<ArrayBuffer>>).next();
    if (piece.done) throw new TypeError("The stream ended before its last part");
    return new Blob([piece.value]);
  };
  let sentBytes = 0;
  let next = 0;
  // Once a part has failed for good the upload has: the other lanes take no further part.
  let failed = false;
  const lane = async () => {
    while (!failed && next < parts.length) {
      const part = parts[next++];
      try {
        await putTried(fetchFn, part.url, await bodyOf(part), part.partNumber, { signal });
      } catch (err) {
        failed = true;
        throw err;
      }
      sentBytes += part.size;
      o.onProgress?.({ sentBytes, totalBytes });
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.concurrency ?? 4, parts.length) }, lane));
  // Read on past the last part: a stream longer than its size fails here, before the completion.
  if (pieces && !(await pieces.next()).done) throw new TypeError("The stream holds more than its size");
  return calls.completeUpload(created.id, { signal });
}
