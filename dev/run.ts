/**
 * npm run dev: the local cloud, the Worker under wrangler dev on :8787 (PORT overrides), the
 * encoder beside it, and a ready free-plan API key. Ctrl-C stops everything it started.
 */
import { join } from "node:path";
import { openAdmin } from "./admin/commands";
import { startStack } from "./stack";
import { PROJECT_ROOT, writeDevState } from "./state";

const port = Number(process.env.PORT ?? 8787);
const verbose = process.env.VERBOSE === "1";
const say = (line: string) => process.stdout.write(`${line}\n`);

say("Starting the local cloud, the Worker (wrangler dev) and the encoder…");
const stack = await startStack({
  databaseUrl: process.env.DATABASE_URL,
  dataDir: join(PROJECT_ROOT, ".data"),
  redisUrl: process.env.REDIS_URL,
  workerPort: port,
  encoder: { kind: "process", allowLoopbackSources: true, workDir: join(PROJECT_ROOT, ".data", "encoder") },
  log: (source, line) => {
    if (verbose || /error|ready|listening/i.test(line)) say(`[${source}] ${line}`);
  },
});
const { info } = stack;
await writeDevState({ databaseUrl: info.databaseUrl, redis: info.cloud.redis, apiUrl: info.apiUrl });

const admin = openAdmin({ databaseUrl: info.databaseUrl, redis: info.cloud.redis });
const { accountId, apiKey } = await admin.createAccount("free");
await admin.close();

// wrangler dev does not fire cron triggers; fire the scheduled handler (the stale-job sweep) as the cron would.
const sweep = setInterval(() => {
  fetch(`${info.apiUrl}/cdn-cgi/handler/scheduled`).catch(() => undefined);
}, 60_000);

say(`
Ready.
  API        ${info.apiUrl}/api/v1
  Encoder    ${info.encoderUrl}  (loopback sources ALLOWED: development setting, never in production)
  Database   ${process.env.DATABASE_URL ? "DATABASE_URL" : "PGlite under .data/pglite"}
  Account    ${accountId} (free plan)
  API key    ${apiKey}

Try:
  curl -s ${info.apiUrl}/api/v1/jobs -H 'Authorization: Bearer ${apiKey}' -H 'Content-Type: application/json' \\
    -d '{"inputUrl":"https://example.com/video.mp4","preset":"mp4_264_720p"}'

More keys and accounts: npm run admin -- account create --plan pro
Press Ctrl-C to stop.`);

let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    clearInterval(sweep);
    say("\nStopping…");
    await stack.stop();
    process.exit(0);
  });
}
