import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { AwsV4Signer } from "aws4fetch";
import { s3ObjectUrl } from "../../domain/s3";
import { JobFailure } from "../failure";
import { httpRequest, readBody } from "../http/client";

export interface S3Config {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** R2 accepts parts of 5 MiB and more (but the last); 16 MiB keeps memory per upload small. */
export const PART_SIZE = 16 * 1024 * 1024;
/**
 * A file up to this size goes up in one PUT streamed from the disk: one request instead of a
 * multipart upload's two more and one per part, no part buffered in memory, and less time and CPU
 * (docs/operations.md#uploads). Larger ones go in parts, a few at once.
 */
export const ONE_PUT_BYTES = 256 * 1024 * 1024;
/** Parts in flight at once: uploads overlap reading the next part, at most 3 × 16 MiB buffered. */
const PARTS_IN_FLIGHT = 3;
/** Storage's 5xx and 429 answers are tried again, with jittered doubling waits from 50 ms (as aws4fetch's client does). */
const STORAGE_RETRIES = 10;
/**
 * A PUT whose connection failed is sent again a few times: enough for a connection reset, while
 * storage that cannot be reached at all fails the attempt at once (QStash delivers it again).
 */
const CONNECTION_RETRIES = 3;
const FIRST_RETRY_MS = 50;

/**
 * A failure that is not storage's answer, as the job's errorMessage may show it. The cause's own
 * message can name work-dir paths (a read error says which file), so only its kind and error
 * code are told; the cause stays attached for logs.
 */
function uploadFailure(err: unknown): JobFailure {
  if (err instanceof JobFailure) return err;
  const e = err as { code?: unknown; path?: unknown; cause?: { code?: unknown } } | undefined;
  const code = [e?.code, e?.cause?.code].find((c): c is string => typeof c === "string");
  const what =
    typeof e?.path === "string" ? "an output file could not be read" : "the output could not be sent to storage";
  return JobFailure.upload(`${what}${code ? ` (${code})` : ""}`, err);
}

interface StorageRequest {
  method: string;
  body?: Buffer | string | (() => Readable);
  headers?: Record<string, string>;
}

interface StorageAnswer {
  status: number;
  etag: string | undefined;
  text: string;
}

export function createUploader(config: S3Config) {
  const objectUrl = (key: string) => s3ObjectUrl(config.endpoint, config.bucket, key);
  const signingKeys = new Map<string, ArrayBuffer>();

  /** Signs the request (SigV4, unsigned payload) and sends it with the encoder's HTTP client; resolves at its headers. */
  async function signedResponse(url: string, init: StorageRequest, signal?: AbortSignal) {
    const signed = await new AwsV4Signer({
      url,
      method: init.method,
      headers: init.headers,
      accessKeyId: config.accessKeyId,
      secretAccessKey: config.secretAccessKey,
      service: "s3",
      region: config.region,
      cache: signingKeys,
    }).sign();
    return httpRequest(signed.url, {
      method: init.method,
      headers: Object.fromEntries(signed.headers),
      body: init.body,
      signal,
    });
  }

  async function signedRequest(url: string, init: StorageRequest, signal?: AbortSignal): Promise<StorageAnswer> {
    const res = await signedResponse(url, init, signal);
    return { status: res.status, etag: res.headers.etag, text: (await readBody(res)).toString("utf8") };
  }

  async function send(url: string, init: StorageRequest, what: string, signal?: AbortSignal): Promise<StorageAnswer> {
    const backOff = (retry: number) => new Promise((r) => setTimeout(r, Math.random() * FIRST_RETRY_MS * 2 ** retry));
    for (let retry = 0; ; retry++) {
      let res: StorageAnswer;
      try {
        res = await signedRequest(url, init, signal);
      } catch (err) {
        // A PUT (an object, a part) sent again is the same write. A POST (a multipart start or
        // completion) is not: the one whose answer was lost may have taken effect.
        if (init.method !== "PUT" || signal?.aborted || retry >= CONNECTION_RETRIES) throw err;
        await backOff(retry);
        continue;
      }
      const retryable = res.status >= 500 || res.status === 429;
      if (retryable && retry < STORAGE_RETRIES) {
        await backOff(retry);
        continue;
      }
      if (res.status < 200 || res.status > 299) throw JobFailure.upload(`${what} answered HTTP ${res.status}`);
      return res;
    }
  }

  /**
   * Uploads a stream of unknown length: single PUT when it fits in one part, multipart
   * otherwise, with a few parts in flight while the next is read.
   */
  async function uploadStream(
    key: string,
    stream: Readable,
    contentType: string,
    signal?: AbortSignal,
  ): Promise<number> {
    let buffered: Buffer[] = [];
    let bufferedBytes = 0;
    let total = 0;
    let uploadId: string | undefined;
    const parts: { number: number; etag: string }[] = [];
    const inFlight = new Set<Promise<void>>();
    let partCount = 0;
    // The first part that failed. A part that fails while no one awaits it leaves the set at once,
    // so neither the race below nor the final wait would see it, and the completion would
    // assemble the object without it.
    let partFailure: { err: unknown } | undefined;
    const throwIfPartFailed = () => {
      if (partFailure) throw partFailure.err;
    };

    /**
     * The next part: exactly PART_SIZE bytes, or what is left for the last. R2 refuses a
     * multipart upload whose parts (but the last) differ in size, and a ZIP stream's chunks do
     * not add up to PART_SIZE: a part of everything buffered would be a little over it, each
     * time by another amount.
     */
    const takePart = () => {
      const all = Buffer.concat(buffered, bufferedBytes);
      const size = Math.min(PART_SIZE, all.length);
      // Copied, so the part's buffer is not held by the bytes left over.
      const rest = Buffer.from(all.subarray(size));
      buffered = rest.length > 0 ? [rest] : [];
      bufferedBytes = rest.length;
      return all.subarray(0, size);
    };

    const flushPart = async () => {
      const body = takePart();
      if (!uploadId) {
        const init = await send(
          `${objectUrl(key)}?uploads`,
          { method: "POST", headers: { "Content-Type": contentType } },
          "multipart start",
          signal,
        );
        uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(init.text)?.[1];
        if (!uploadId) throw JobFailure.upload("no UploadId in the multipart start answer");
      }
      const number = ++partCount;
      const url = `${objectUrl(key)}?partNumber=${number}&uploadId=${encodeURIComponent(uploadId)}`;
      const upload = send(url, { method: "PUT", body }, `part ${number}`, signal).then((res) => {
        parts.push({ number, etag: res.etag ?? "" });
      });
      const tracked = upload.finally(() => inFlight.delete(tracked));
      tracked.catch((err) => (partFailure ??= { err }));
      inFlight.add(tracked);
      if (inFlight.size >= PARTS_IN_FLIGHT) await Promise.race(inFlight);
      throwIfPartFailed();
    };

    try {
      for await (const chunk of stream) {
        const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        buffered.push(buf);
        bufferedBytes += buf.length;
        total += buf.length;
        while (bufferedBytes >= PART_SIZE) await flushPart();
      }
      if (!uploadId) {
        await send(
          objectUrl(key),
          { method: "PUT", body: Buffer.concat(buffered, bufferedBytes), headers: { "Content-Type": contentType } },
          "PUT",
          signal,
        );
        return total;
      }
      if (bufferedBytes > 0) await flushPart();
      await Promise.all(inFlight);
      throwIfPartFailed();
      parts.sort((a, b) => a.number - b.number);
      const xml =
        `<CompleteMultipartUpload>` +
        parts.map((p) => `<Part><PartNumber>${p.number}</PartNumber><ETag>${p.etag}</ETag></Part>`).join("") +
        `</CompleteMultipartUpload>`;
      const done = await send(
        `${objectUrl(key)}?uploadId=${encodeURIComponent(uploadId)}`,
        { method: "POST", body: xml },
        "multipart complete",
        signal,
      );
      // S3 can answer 200 with an error document for a failed completion.
      if (done.text.includes("<Error>")) throw JobFailure.upload("multipart completion was refused");
      return total;
    } catch (err) {
      await Promise.allSettled(inFlight);
      if (uploadId) {
        await signedRequest(`${objectUrl(key)}?uploadId=${encodeURIComponent(uploadId)}`, { method: "DELETE" }).catch(
          () => undefined,
        );
      }
      throw uploadFailure(err);
    }
  }

  /** Signs a GET of a split job's scratch object (storage is ours, so no source guard); resolves at its headers. */
  async function openObject(key: string, signal?: AbortSignal): Promise<Readable> {
    const res = await signedResponse(objectUrl(key), { method: "GET" }, signal);
    if (res.status === 404) {
      res.body.resume();
      throw JobFailure.scratchMissing();
    }
    if (res.status < 200 || res.status > 299) {
      res.body.resume();
      throw JobFailure.download(`storage answered HTTP ${res.status} for a part's file`);
    }
    return res.body;
  }

  /**
   * Uploads a file, and tells what storage tagged it with (its ETag; none for a multipart
   * upload, whose tag is not one a later HEAD could be checked against here).
   */
  async function storeFile(
    key: string,
    path: string,
    contentType: string,
    signal?: AbortSignal,
  ): Promise<{ bytes: number; etag: string | undefined }> {
    try {
      const { size } = await stat(path);
      if (size <= ONE_PUT_BYTES) {
        // Read again for each transmission: a PUT sent again is the same write.
        const body = () => createReadStream(path, { highWaterMark: 1024 * 1024 });
        const headers = { "Content-Type": contentType, "Content-Length": String(size) };
        const answer = await send(objectUrl(key), { method: "PUT", body, headers }, "PUT", signal);
        return { bytes: size, etag: answer.etag };
      }
      const bytes = await uploadStream(
        key,
        createReadStream(path, { highWaterMark: 1024 * 1024 }),
        contentType,
        signal,
      );
      return { bytes, etag: undefined };
    } catch (err) {
      throw uploadFailure(err);
    }
  }

  /** Streams a scratch object into `path`. */
  async function downloadFile(key: string, path: string, signal?: AbortSignal): Promise<number> {
    const file = createWriteStream(path);
    await pipeline(await openObject(key, signal), file, { signal });
    return file.bytesWritten;
  }

  return {
    uploadStream,
    openObject,
    downloadFile,
    /** Deletes an object; one already gone is no error (S3 answers 204 either way). */
    async deleteObject(key: string): Promise<void> {
      await send(objectUrl(key), { method: "DELETE" }, "DELETE");
    },
    storeFile,
    async uploadFile(key: string, path: string, contentType: string, signal?: AbortSignal): Promise<number> {
      return (await storeFile(key, path, contentType, signal)).bytes;
    },
    /** Storage's tag for the object under `key` (a HEAD), or undefined when there is none. */
    async objectTag(key: string, signal?: AbortSignal): Promise<string | undefined> {
      const answer = await signedRequest(objectUrl(key), { method: "HEAD" }, signal);
      return answer.status === 200 ? answer.etag : undefined;
    },
  };
}

export type Uploader = ReturnType<typeof createUploader>;
