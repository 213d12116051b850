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
  /** Deletes every object whose key starts with `prefix`; answers how many there were. */
  deleteUnder(prefix: string): Promise<number>;
}

/** Keys one ListObjectsV2 page names, and one DeleteObjects request deletes, at most (S3's own bound). */
const KEYS_PER_REQUEST = 1000;

/** S3's answers: a lone <Contents> or <Error> is an array all the same. */
const xml = new XMLParser({ isArray: (name) => name === "Contents" || name === "Error", parseTagValue: false });

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

  return {
    async signGet(key, ttlSeconds, now = new Date()) {
      const url = new URL(objectUrl(key));
      url.searchParams.set("X-Amz-Expires", String(ttlSeconds));
      // The signing time goes in as YYYYMMDDTHHMMSSZ, whole seconds, and the link expires
      // X-Amz-Expires after it: expiresAt counts from the same second, not from `now`'s milliseconds.
      const signedAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
      const datetime = signedAt.toISOString().replace(/[:-]|\.\d{3}/g, "");
      const signed = await measured("sign", () =>
        client.sign(url.toString(), { method: "GET", aws: { signQuery: true, datetime } }),
      );
      return { url: signed.url, expiresAt: new Date(signedAt.getTime() + ttlSeconds * 1000) };
    },
    async exists(key) {
      const res = await measured("storage-head", () => client.fetch(objectUrl(key), { method: "HEAD" }));
      if (res.status === 404) return false;
      if (!res.ok) throw new Error(`Storage HEAD ${key} failed with ${res.status}`);
      return true;
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
