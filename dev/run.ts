/**
 * npm run dev: the local cloud, the Worker under wrangler dev on :8787 (PORT overrides), the
 * encoder beside it, and a ready free-plan API key. Ctrl-C stops everything it started.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { openAdmin } from "./admin/commands";
import { startStack } from "./stack";
import { PROJECT_ROOT, writeDevState } from "./state";

const port = Number(process.env.PORT ?? 8787);
const verbose = process.env.VERBOSE === "1";
const say = (line: string) => process.stdout.write(`${line}\n`);

// Handlers go in before anything starts: wrangler runs in its own process group, so a Ctrl-C
// during start-up must stop it from here or it would outlive this process.
const starting = new AbortController();
say("Starting the local cloud, the Worker (wrangler dev) and the encoder…");
const started = startStack({
  databaseUrl: process.env.DATABASE_URL,
  dataDir: join(PROJECT_ROOT, ".data"),
  redisUrl: process.env.REDIS_URL,
  workerPort: port,
  encoder: { kind: "process", allowLoopbackSources: true, workDir: join(PROJECT_ROOT, ".data", "encoder") },
  log: (source, line) => {
    if (verbose || /error|ready|listening/i.test(line)) say(`[${source}] ${line}`);
  },
  signal: starting.signal,
});
let sweep: ReturnType<typeof setInterval> | undefined;
let stopping = false;
async function shutDown(code: number) {
  if (stopping) return;
  stopping = true;
  starting.abort();
  clearInterval(sweep);
  say("\nStopping…");
  // An aborted start stops what it had started before it rejects; a finished one is stopped here.
  const stack = await started.catch(() => undefined);
  await stack?.stop();
  process.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void shutDown(0));

try {
  const stack = await started;
  const { info } = stack;
  await writeDevState({ databaseUrl: info.databaseUrl, redis: info.cloud.redis, apiUrl: info.apiUrl });

  const admin = openAdmin({ databaseUrl: info.databaseUrl, redis: info.cloud.redis });
  const { accountId, apiKey } = await admin.createAccount("free");
  // A dashboard sign-in for the dev account; each run makes a new account, so the email names it.
  const dashboardUser = { email: `dev-${accountId.slice(0, 8)}@example.com`, password: randomBytes(12).toString("base64url") };
  await admin.addUser(accountId, dashboardUser);
  await admin.close();

  // wrangler dev does not fire cron triggers; fire the scheduled handler (the stale-job sweep) as the cron would.
  sweep = setInterval(() => {
    fetch(`${info.apiUrl}/cdn-cgi/handler/scheduled`).catch(() => undefined);
  }, 60_000);

  say(`
Ready.
  API        ${info.apiUrl}/api/v1
  Encoder    ${info.encoderUrl}  (loopback sources ALLOWED: development setting, never in production)
  Database   ${process.env.DATABASE_URL ? "DATABASE_URL" : "PGlite under .data/pglite"}
  Account    ${accountId} (free plan)
  API key    ${apiKey}
  Dashboard  ${info.apiUrl}/dashboard
  Sign in    ${dashboardUser.email}  password ${dashboardUser.password}

Try:
  curl -s ${info.apiUrl}/api/v1/jobs -H 'Authorization: Bearer ${apiKey}' -H 'Content-Type: application/json' \\
    -d '{"inputUrl":"https://example.com/video.mp4","preset":"mp4_264_720p"}'

More keys and accounts: npm run admin -- account create --plan pro
Press Ctrl-C to stop.`);
} catch (err) {
  // A signal during start-up already has shutDown under way; anything else is a real failure.
  if (!stopping) {
    console.error(err);
    await shutDown(1);
  }
}
