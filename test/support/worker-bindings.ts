/** The Worker's required bindings, each with a value that passes its check (worker/env.ts); no service behind any. */
export const WORKER_BINDINGS = {
  DATABASE_URL: "postgres://u:p@db.example.com/app",
  S3_ENDPOINT: "https://account.r2.cloudflarestorage.com",
  S3_BUCKET: "outputs",
  S3_ACCESS_KEY_ID: "id",
  S3_SECRET_ACCESS_KEY: "secret",
  QSTASH_TOKEN: "token",
  UPSTASH_REDIS_REST_URL: "https://redis.example.com",
  UPSTASH_REDIS_REST_TOKEN: "token",
  ENCODER_URL: "https://encoder.example.com",
  PUBLIC_URL: "https://api.example.com",
  QSTASH_CURRENT_SIGNING_KEY: "current",
  QSTASH_NEXT_SIGNING_KEY: "next",
  INTERNAL_SECRET: "a-secret-of-sixteen-or-more",
} as const;
