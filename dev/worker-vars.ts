import type { LocalCloudInfo } from "./cloud";

/** The Worker's bindings for a local cloud; no imports beyond types, so workerd tests can use it. */
export function workerVars(
  cloud: LocalCloudInfo,
  urls: { publicUrl: string; encoderUrl: string },
  internalSecret: string,
): Record<string, string> {
  return {
    DATABASE_URL: cloud.databaseUrl,
    NEON_HTTP_ENDPOINT: cloud.neonHttp,
    S3_ENDPOINT: cloud.s3.endpoint,
    S3_REGION: cloud.s3.region,
    S3_BUCKET: cloud.s3.bucket,
    S3_ACCESS_KEY_ID: cloud.s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: cloud.s3.secretAccessKey,
    QSTASH_URL: cloud.qstash.url,
    QSTASH_TOKEN: cloud.qstash.token,
    QSTASH_CURRENT_SIGNING_KEY: cloud.qstash.currentSigningKey,
    QSTASH_NEXT_SIGNING_KEY: cloud.qstash.nextSigningKey,
    UPSTASH_REDIS_REST_URL: cloud.redis.url,
    UPSTASH_REDIS_REST_TOKEN: cloud.redis.token,
    ENCODER_URL: urls.encoderUrl,
    PUBLIC_URL: urls.publicUrl,
    INTERNAL_SECRET: internalSecret,
    // A development setting, as the encoder's ALLOW_LOOPBACK_SOURCES: the local receivers listen on loopback.
    ALLOW_LOOPBACK_WEBHOOKS: "true",
    // Locally a retry follows its failed attempt within seconds, as the local QStash's own retries do.
    JOB_RETRY_DELAY_SECONDS: "3",
  };
}
