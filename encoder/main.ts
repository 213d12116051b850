import { mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { loadEncoderConfig } from "./config";
import { createInternalApi } from "./internal-api";
import { createRenderer } from "./jobs/render";
import { createEncoderServer } from "./server";
import { createUploader } from "./upload/s3";

const config = loadEncoderConfig();

// Work dirs left by a process that died mid-job; their jobs are retried by QStash or the sweep.
await mkdir(config.WORK_DIR, { recursive: true });
for (const entry of await readdir(config.WORK_DIR)) {
  if (entry.startsWith("job-")) await rm(join(config.WORK_DIR, entry), { recursive: true, force: true });
}

const server = createEncoderServer(
  {
    api: createInternalApi(config.API_INTERNAL_URL, config.INTERNAL_SECRET),
    uploader: createUploader({
      endpoint: config.S3_ENDPOINT,
      region: config.S3_REGION,
      bucket: config.S3_BUCKET,
      accessKeyId: config.S3_ACCESS_KEY_ID,
      secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    }),
    render: createRenderer(config),
    workRoot: config.WORK_DIR,
    heartbeatMs: config.HEARTBEAT_MS,
  },
  {
    signingKeys: { current: config.QSTASH_CURRENT_SIGNING_KEY, next: config.QSTASH_NEXT_SIGNING_KEY },
    concurrency: config.CONCURRENCY,
  },
);
// Encodes can take long; the delivery stays open until the job is settled.
server.requestTimeout = 0;
server.headersTimeout = 60_000;
server.listen(config.PORT, config.HOST, () => {
  console.log(JSON.stringify({ level: "info", msg: "encoder listening", port: config.PORT, allowLoopbackSources: config.ALLOW_LOOPBACK_SOURCES }));
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
