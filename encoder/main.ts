import { totalmem } from "node:os";
import { join } from "node:path";
import { encoderDeliveryUrl } from "../domain/jobs";
import { loadEncoderConfig } from "./config";
import { installCrashGuard } from "./crash-guard";
import { encoderSession } from "./ffmpeg/priority";
import { killRunningTools, limitToolMemory } from "./ffmpeg/run";
import { briefly, createInternalApi } from "./internal-api";
import { createRenderers } from "./jobs/render";
import { formatStage } from "./jobs/stage-log";
import { clearLeftovers } from "./leftovers";
import { toolMemoryBytes } from "./memory";
import { createEncoderServer } from "./server";
import { keptScratch } from "./split/kept-scratch";
import { createUploader } from "./upload/s3";

// First, so that a configuration that does not load is reported as any failure outside a job; an error in a job comes after it loaded.
installCrashGuard({ beforeExit: killRunningTools, encoderName: () => config.ENCODER_NAME });
const config = loadEncoderConfig();

const toolMemory = toolMemoryBytes({
  configured: config.TOOL_MEMORY_BYTES,
  totalBytes: totalmem(),
  concurrency: config.CONCURRENCY,
});
limitToolMemory(toolMemory);
if (config.SESSION_NICENESS) void encoderSession.enable();

const orphans = await clearLeftovers(config.WORK_DIR);
if (orphans.length > 0)
  console.log(
    JSON.stringify({ level: "info", msg: "killed FFmpeg processes left by a previous encoder", pids: orphans }),
  );

const api = createInternalApi(config.API_INTERNAL_URL, config.INTERNAL_SECRET, {
  retryForMs: config.WORKER_RETRY_MS,
  onRetry: (jobId, call, err, waitMs) =>
    console.log(
      formatStage(
        jobId,
        { stage: "worker-retry", call, reason: briefly(err), waitSeconds: waitMs / 1000 },
        { encoder: config.ENCODER_NAME },
      ),
    ),
});
const uploader = createUploader({
  endpoint: config.S3_ENDPOINT,
  region: config.S3_REGION,
  bucket: config.S3_BUCKET,
  accessKeyId: config.S3_ACCESS_KEY_ID,
  secretAccessKey: config.S3_SECRET_ACCESS_KEY,
});
// Beside the deliveries' dirs, on their file system: a kept file is a hard link to one made in such a dir.
const kept = await keptScratch(join(config.WORK_DIR, "kept"));
const server = createEncoderServer(
  {
    api,
    uploader,
    render: createRenderers(config, { api, uploader, kept }),
    kept,
    workRoot: config.WORK_DIR,
    heartbeatMs: config.HEARTBEAT_MS,
    encoderName: config.ENCODER_NAME,
    log: (line) => console.log(line),
  },
  {
    signingKeys: { current: config.QSTASH_CURRENT_SIGNING_KEY, next: config.QSTASH_NEXT_SIGNING_KEY },
    deliveryUrl: encoderDeliveryUrl(config.PUBLIC_URL),
    concurrency: config.CONCURRENCY,
  },
);
// Encodes can take long; the delivery stays open until the job is settled.
server.requestTimeout = 0;
server.headersTimeout = 60_000;
server.listen(config.PORT, config.HOST, () => {
  console.log(
    JSON.stringify({
      level: "info",
      msg: "encoder listening",
      port: config.PORT,
      name: config.ENCODER_NAME,
      allowLoopbackSources: config.ALLOW_LOOPBACK_SOURCES,
      toolMemoryBytes: toolMemory,
    }),
  );
});

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, async () => {
    // A second signal stops at once.
    if (!stopping && config.SHUTDOWN_GRACE_MS > 0) {
      stopping = true;
      console.log(
        JSON.stringify({
          level: "info",
          msg: "stopping: running encodes may finish",
          signal,
          graceSeconds: config.SHUTDOWN_GRACE_MS / 1000,
        }),
      );
      const finished = await server.drain(config.SHUTDOWN_GRACE_MS);
      console.log(
        JSON.stringify({
          level: "info",
          msg: finished ? "every running encode was answered" : "grace over: stopping the encodes still running",
        }),
      );
    }
    // FFmpeg would otherwise outlive the encoder, encoding for a delivery nobody answers.
    killRunningTools();
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
