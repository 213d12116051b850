import { AwsClient } from "aws4fetch";
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
}

/** R2 (or any S3 server) through its S3 API. */
export function createStorage(env: Env): Storage {
  const client = new AwsClient({
    accessKeyId: env.S3_ACCESS_KEY_ID,
    secretAccessKey: env.S3_SECRET_ACCESS_KEY,
    service: "s3",
    region: env.S3_REGION,
  });
  const objectUrl = (key: string) => s3ObjectUrl(env.S3_ENDPOINT, env.S3_BUCKET, key);

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
  };
}
