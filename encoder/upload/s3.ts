import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import type { Readable } from "node:stream";
import { AwsClient } from "aws4fetch";
import { s3ObjectUrl } from "../../domain/s3";

export interface S3Config {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** R2 accepts parts of 5 MiB and more (but the last); 16 MiB keeps memory per upload small. */
export const PART_SIZE = 16 * 1024 * 1024;
/** Parts in flight at once: uploads overlap reading the next part, at most 3 × 16 MiB buffered. */
const PARTS_IN_FLIGHT = 3;

export class UploadError extends Error {
  readonly retryable = true;
}

/**
 * A failure that is not storage's answer, as the job's errorMessage may show it. The cause's own
 * message can name work-dir paths (a read error says which file), so only its kind and error
 * code are told; the cause stays attached for logs.
 */
function uploadFailure(err: unknown): UploadError {
  if (err instanceof UploadError) return err;
  const e = err as { code?: unknown; path?: unknown; cause?: { code?: unknown } } | undefined;
  const code = [e?.code, e?.cause?.code].find((c): c is string => typeof c === "string");
  const what = typeof e?.path === "string" ? "an output file could not be read" : "the output could not be sent to storage";
  return new UploadError(`Upload failed: ${what}${code ? ` (${code})` : ""}`, { cause: err });
}

export function createUploader(config: S3Config) {
  const client = new AwsClient({
    accessKeyId: config.accessKeyId,
    secretAccessKey: config.secretAccessKey,
    service: "s3",
    region: config.region,
  });
  const objectUrl = (key: string) => s3ObjectUrl(config.endpoint, config.bucket, key);

  async function send(url: string, init: RequestInit, what: string): Promise<Response> {
    const res = await client.fetch(url, init);
    if (!res.ok) throw new UploadError(`Upload failed: ${what} answered HTTP ${res.status}`);
    return res;
  }

  /**
   * Uploads a stream of unknown length: single PUT when it fits in one part, multipart
   * otherwise, with a few parts in flight while the next is read.
   */
  async function uploadStream(key: string, stream: Readable, contentType: string): Promise<number> {
    let buffered: Buffer[] = [];
    let bufferedBytes = 0;
    let total = 0;
    let uploadId: string | undefined;
    const parts: { number: number; etag: string }[] = [];
    const inFlight = new Set<Promise<void>>();
    let partCount = 0;

    const flushPart = async () => {
      const body = Buffer.concat(buffered, bufferedBytes);
      buffered = [];
      bufferedBytes = 0;
      if (!uploadId) {
        const init = await send(`${objectUrl(key)}?uploads`, { method: "POST", headers: { "Content-Type": contentType } }, "multipart start");
        uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(await init.text())?.[1];
        if (!uploadId) throw new UploadError("Upload failed: no UploadId in the multipart start answer");
      }
      const number = ++partCount;
      const url = `${objectUrl(key)}?partNumber=${number}&uploadId=${encodeURIComponent(uploadId)}`;
      const upload = send(url, { method: "PUT", body }, `part ${number}`).then((res) => {
        parts.push({ number, etag: res.headers.get("etag") ?? "" });
      });
      const tracked = upload.finally(() => inFlight.delete(tracked));
      // Observed later through race/all; this keeps a failure meanwhile from being "unhandled".
      tracked.catch(() => undefined);
      inFlight.add(tracked);
      if (inFlight.size >= PARTS_IN_FLIGHT) await Promise.race(inFlight);
    };

    try {
      for await (const chunk of stream) {
        const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        buffered.push(buf);
        bufferedBytes += buf.length;
        total += buf.length;
        if (bufferedBytes >= PART_SIZE) await flushPart();
      }
      if (!uploadId) {
        await send(objectUrl(key), { method: "PUT", body: Buffer.concat(buffered, bufferedBytes), headers: { "Content-Type": contentType } }, "PUT");
        return total;
      }
      if (bufferedBytes > 0) await flushPart();
      await Promise.all(inFlight);
      parts.sort((a, b) => a.number - b.number);
      const xml =
        `<CompleteMultipartUpload>` +
        parts.map((p) => `<Part><PartNumber>${p.number}</PartNumber><ETag>${p.etag}</ETag></Part>`).join("") +
        `</CompleteMultipartUpload>`;
      const done = await send(`${objectUrl(key)}?uploadId=${encodeURIComponent(uploadId)}`, { method: "POST", body: xml }, "multipart complete");
      // S3 can answer 200 with an error document for a failed completion.
      const text = await done.text();
      if (text.includes("<Error>")) throw new UploadError("Upload failed: multipart completion was refused");
      return total;
    } catch (err) {
      await Promise.allSettled(inFlight);
      if (uploadId) {
        await client.fetch(`${objectUrl(key)}?uploadId=${encodeURIComponent(uploadId)}`, { method: "DELETE" }).catch(() => undefined);
      }
      throw uploadFailure(err);
    }
  }

  return {
    uploadStream,
    async uploadFile(key: string, path: string, contentType: string): Promise<number> {
      try {
        const { size } = await stat(path);
        if (size <= PART_SIZE) {
          await send(objectUrl(key), { method: "PUT", body: await readFile(path), headers: { "Content-Type": contentType } }, "PUT");
          return size;
        }
        return await uploadStream(key, createReadStream(path, { highWaterMark: 1024 * 1024 }), contentType);
      } catch (err) {
        throw uploadFailure(err);
      }
    },
  };
}

export type Uploader = ReturnType<typeof createUploader>;
