import { createHash } from "node:crypto";
import { AwsClient } from "aws4fetch";
import { XMLParser } from "fast-xml-parser";
import { s3ObjectUrl } from "../../domain/s3";
import type { Env } from "../env";
import { measured } from "./timing";

export interface SignedLink {
  url: string;
  expiresAt: Date;
}

export interface Storage {
  /** A presigned GET that works with no Authorization header until `expiresAt`. */
  signGet(key: string, ttlSeconds: number, now?: Date): Promise<SignedLink>;
  exists(key: string): Promise<boolean>;
  /** The object's size in bytes, or null when there is no such object. */
  sizeOf(key: string): Promise<number | null>;
  /**
   * A presigned PUT of `key` until `expiresAt`, its Content-Length and Content-Type signed: storage
   * refuses a body of another length, or sent as another type (R2 takes no POST policy, so a
   * signed length is the one bound a presigned upload can carry).
   */
  signPut(key: string, ttlSeconds: number, now: Date, body: SignedBody): Promise<SignedLink>;
  /** Starts a multipart upload of `key` stored as `contentType` (CreateMultipartUpload); answers its upload id. */
  createMultipart(key: string, contentType: string): Promise<string>;
  /** A presigned UploadPart of one part, its Content-Length signed. */
  signUploadPart(key: string, part: UploadPartRequest, ttlSeconds: number, now: Date): Promise<SignedLink>;
  /** The parts storage holds of a multipart upload (ListParts), by part number; null when the upload is gone. */
  listParts(key: string, uploadId: string): Promise<StoredPart[] | null>;
  /** Assembles the object from these parts (CompleteMultipartUpload); false when the upload is gone. */
  completeMultipart(key: string, uploadId: string, parts: StoredPart[]): Promise<boolean>;
  /** Abandons a multipart upload, its stored parts deleted (AbortMultipartUpload); one already gone is no error. */
  abortMultipart(key: string, uploadId: string): Promise<void>;
  /** Deletes every object whose key starts with `prefix`; answers how many there were. */
  deleteUnder(prefix: string): Promise<number>;
  /** Deletes one object; one already gone is no error. */
  deleteObject(key: string): Promise<void>;
  /** Storage's own answer to a GET or HEAD of the object, a byte range passed on: 200, 206, 304, 404 or 416. */
  read(key: string, request: { method: "GET" | "HEAD"; range?: string; ifNoneMatch?: string }): Promise<Response>;
}

/** What a presigned PUT's body must be. */
interface SignedBody {
  contentLength: number;
  contentType: string;
}

interface UploadPartRequest {
  uploadId: string;
  partNumber: number;
  size: number;
}

export interface StoredPart {
  partNumber: number;
  etag: string;
  size: number;
}

/** Keys one ListObjectsV2 page names, and one DeleteObjects request deletes, at most (S3's own bound). */
const KEYS_PER_REQUEST = 1000;

/** S3's answers: a lone <Contents> or <Error> is an array all the same. */
const xml = new XMLParser({
  isArray: (name) => name === "Contents" || name === "Error" || name === "Part",
  parseTagValue: false,
});

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** R2 (or any S3 server) through its S3 API. */
export function createStorage(env: Env): Storage {
  const client = new AwsClient({
    accessKeyId: env.S3_ACCESS_KEY_ID,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY,
    service: "s3",
    region: env.S3_REGION,
  });
  const objectUrl = (key: string) => s3ObjectUrl(env.S3_ENDPOINT, env.S3_BUCKET, key);
  const bucketUrl = () => objectUrl("").replace(/\/$/, "");

  async function listKeys(prefix: string): Promise<string[]> {
    const url = new URL(bucketUrl());
    url.searchParams.set("list-type", "2");
    url.searchParams.set("prefix", prefix);
    url.searchParams.set("max-keys", String(KEYS_PER_REQUEST));
    const res = await measured("storage-list", () => client.fetch(url.toString(), { method: "GET" }));
    const text = await res.text();
    if (!res.ok) throw new Error(`Storage list ${prefix} failed with ${res.status}`);
    const contents: { Key: string }[] = xml.parse(text)?.ListBucketResult?.Contents ?? [];
    return contents.map((c) => String(c.Key));
  }

  async function deleteKeys(keys: string[]): Promise<void> {
    const url = new URL(bucketUrl());
    url.searchParams.set("delete", "");
    const body = `<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>true</Quiet>${keys
      .map((key) => `<Object><Key>${escapeXml(key)}</Key></Object>`)
      .join("")}</Delete>`;
    // S3 asks for the body's MD5 on a multi-object delete; R2 takes it too.
    const md5 = createHash("md5").update(body).digest("base64");
    const res = await measured("storage-delete", () =>
      client.fetch(url.toString(), {
        method: "POST",
        body,
        headers: { "Content-Type": "application/xml", "Content-MD5": md5 },
      }),
    );
    const text = await res.text();
    if (!res.ok) throw new Error(`Storage delete failed with ${res.status}`);
    const errors: { Key?: string; Code?: string }[] = xml.parse(text)?.DeleteResult?.Error ?? [];
    if (errors.length > 0) throw new Error(`Storage delete left ${errors.length} objects (${errors[0].Code})`);
  }

  /**
   * A presigned request. `headers` are signed with it (aws4fetch leaves Content-Length out
   * unless told to sign every header), so the request must carry them as signed.
   */
  async function presign(
    method: string,
    url: URL,
    ttlSeconds: number,
    now: Date,
    headers: Record<string, string> = {},
  ): Promise<SignedLink> {
    url.searchParams.set("X-Amz-Expires", String(ttlSeconds));
    // The signing time goes in as YYYYMMDDTHHMMSSZ, whole seconds, and the link expires
    // X-Amz-Expires after it: expiresAt counts from the same second, not from `now`'s milliseconds.
    const signedAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
    const datetime = signedAt.toISOString().replace(/[:-]|\.\d{3}/g, "");
    const signed = await measured("sign", () =>
      client.sign(url.toString(), { method, headers, aws: { signQuery: true, datetime, allHeaders: true } }),
    );
    return { url: signed.url, expiresAt: new Date(signedAt.getTime() + ttlSeconds * 1000) };
  }

  async function sizeOf(key: string): Promise<number | null> {
    const res = await measured("storage-head", () => client.fetch(objectUrl(key), { method: "HEAD" }));
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`Storage HEAD ${key} failed with ${res.status}`);
    return Number(res.headers.get("Content-Length") ?? 0);
  }

  /** The object's URL with a multipart upload's query parameters. */
  const multipartUrl = (key: string, params: Record<string, string>) => {
    const url = new URL(objectUrl(key));
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url;
  };

  async function listPartsPage(key: string, uploadId: string, marker: number) {
    const url = multipartUrl(key, { uploadId, "part-number-marker": String(marker) });
    const res = await measured("storage-list-parts", () => client.fetch(url.toString(), { method: "GET" }));
    const text = await res.text();
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`Storage ListParts ${key} failed with ${res.status}`);
    const result = xml.parse(text)?.ListPartsResult ?? {};
    const parts: StoredPart[] = (result.Part ?? []).map((p: { PartNumber: string; ETag: string; Size: string }) => ({
      partNumber: Number(p.PartNumber),
      etag: String(p.ETag),
      size: Number(p.Size),
    }));
    const next = result.IsTruncated === "true" ? Number(result.NextPartNumberMarker) : null;
    return { parts, next };
  }

  return {
    signGet: (key, ttlSeconds, now = new Date()) => presign("GET", new URL(objectUrl(key)), ttlSeconds, now),
    signPut: (key, ttlSeconds, now, { contentLength, contentType }) =>
      presign("PUT", new URL(objectUrl(key)), ttlSeconds, now, {
        "Content-Length": String(contentLength),
        "Content-Type": contentType,
      }),
    signUploadPart: (key, part, ttlSeconds, now) =>
      presign(
        "PUT",
        multipartUrl(key, { partNumber: String(part.partNumber), uploadId: part.uploadId }),
        ttlSeconds,
        now,
        { "Content-Length": String(part.size) },
      ),
    async createMultipart(key, contentType) {
      const url = multipartUrl(key, { uploads: "" });
      const headers = { "Content-Type": contentType };
      const res = await measured("storage-multipart", () => client.fetch(url.toString(), { method: "POST", headers }));
      const text = await res.text();
      if (!res.ok) throw new Error(`Storage CreateMultipartUpload ${key} failed with ${res.status}`);
      const uploadId = xml.parse(text)?.InitiateMultipartUploadResult?.UploadId;
      if (typeof uploadId !== "string" || uploadId === "") throw new Error("Storage answered no UploadId");
      return uploadId;
    },
    async listParts(key, uploadId) {
      const parts: StoredPart[] = [];
      for (let marker: number | null = 0; marker !== null; ) {
        const page = await listPartsPage(key, uploadId, marker);
        if (!page) return null;
        parts.push(...page.parts);
        // A marker that does not move would loop for ever.
        marker = page.next !== null && page.next > marker ? page.next : null;
      }
      return parts;
    },
    async completeMultipart(key, uploadId, parts) {
      const url = multipartUrl(key, { uploadId });
      const body = `<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUpload>${parts
        .map((p) => `<Part><PartNumber>${p.partNumber}</PartNumber><ETag>${escapeXml(p.etag)}</ETag></Part>`)
        .join("")}</CompleteMultipartUpload>`;
      const res = await measured("storage-multipart", () =>
        client.fetch(url.toString(), { method: "POST", body, headers: { "Content-Type": "application/xml" } }),
      );
      const text = await res.text();
      if (res.status === 404) return false;
      // S3 may answer 200 with an <Error> in the body when the assembly fails late.
      if (!res.ok || xml.parse(text)?.Error)
        throw new Error(`Storage CompleteMultipartUpload ${key} failed with ${res.status}`);
      return true;
    },
    async abortMultipart(key, uploadId) {
      const url = multipartUrl(key, { uploadId });
      const res = await measured("storage-multipart", () => client.fetch(url.toString(), { method: "DELETE" }));
      await res.arrayBuffer();
      if (!res.ok && res.status !== 404)
        throw new Error(`Storage AbortMultipartUpload ${key} failed with ${res.status}`);
    },
    read(key, { method, range, ifNoneMatch }) {
      const headers: Record<string, string> = {};
      if (range) headers.range = range;
      if (ifNoneMatch) headers["if-none-match"] = ifNoneMatch;
      return measured("storage-read", () => client.fetch(objectUrl(key), { method, headers }));
    },
    async deleteObject(key) {
      const res = await measured("storage-delete", () => client.fetch(objectUrl(key), { method: "DELETE" }));
      await res.arrayBuffer();
      if (!res.ok && res.status !== 404) throw new Error(`Storage DELETE ${key} failed with ${res.status}`);
    },
    sizeOf,
    async exists(key) {
      return (await sizeOf(key)) !== null;
    },
    async deleteUnder(prefix) {
      // Listed from the start each time: what was deleted is no longer listed, so no page is skipped.
      const deleted = new Set<string>();
      for (let keys = await listKeys(prefix); keys.length > 0; keys = await listKeys(prefix)) {
        if (keys.some((key) => deleted.has(key)))
          throw new Error(`Storage kept objects under ${prefix} it said it deleted`);
        await deleteKeys(keys);
        for (const key of keys) deleted.add(key);
      }
      return deleted.size;
    },
  };
}
