/**
 * npm run dev: the local cloud, the Worker in workerd on :8787 (PORT overrides), the
 * encoder beside it (ENCODERS=N: N of them behind a local stand-in for Fly.io's proxy, as the
 * Machines of docs/scaling.md), sample media to try it on, and a ready API key on a DEV_PLAN account (free
 * unless set). Everything it keeps is under DATA_DIR (default .data/), which one run at a time
 * may hold. Ctrl-C stops everything it started.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { isJobStageLine } from "../encoder/jobs/stage-log";
import { isPlanId, PLAN_IDS } from "../domain/plans";
import { openAdmin } from "./admin/commands";
import { DataDirInUse } from "./cloud/data-dir-lock";
import { startFileServer } from "./cloud/file-server";
import { portInUse } from "./cloud/free-port";
import { SHARED_DIR } from "./cloud/postgres-as-root";
import { PostgresNotStarted } from "./cloud/postgres-not-started";
import { Unreachable } from "./cloud/unreachable";
import { playbackAnnouncer } from "./playback-announcer";
import { parsePort } from "./port";
import { prepareSampleMedia, SAMPLE_CLIP, SAMPLE_LOGO, writeSampleTimeline } from "./samples";
import { encoderName, startStack } from "./stack";
import { DATA_DIR, PROJECT_ROOT, removeDevState, writeDevState } from "./state";
import { trySequence } from "./try-it";
import { PortInUse } from "./worker-process";

function portOrExit(): number {
  try {
    return parsePort(process.env.PORT);
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}

/** ENCODERS: how many encoder processes; 1 unless set. */
function encoderCountOrExit(): number {
  const raw = process.env.ENCODERS?.trim() || "1";
  const count = Number(raw);
  if (/^\d+$/.test(raw) && count >= 1 && count <= MAX_ENCODERS) return count;
  console.error(
    `ENCODERS must be a whole number from 1 to ${MAX_ENCODERS} (unset or empty for 1); it was "${process.env.ENCODERS}".`,
  );
  process.exit(1);
}
/** Each encoder is a Node process running FFmpeg: more than this would only fight over one machine's cores. */
const MAX_ENCODERS = 16;

const port = portOrExit();
const encoderCount = encoderCountOrExit();
const verbose = process.env.VERBOSE === "1";
const plan = process.env.DEV_PLAN ?? "free";
const say = (line: string) => process.stdout.write(`${line}\n`);
if (!isPlanId(plan)) {
  console.error(`DEV_PLAN must be one of ${PLAN_IDS.join(", ")}; it was "${plan}".`);
  process.exit(1);
}
const otherPort = port < 65535 ? port + 1 : port - 1;
const portTaken = () =>
  `Port ${port} is in use: another npm run dev? Stop what listens there, or give this run another port: PORT=${otherPort} npm run dev.`;
// Checked before anything starts: the Worker's server would only fail once the rest was up.
if (await portInUse(port)) {
  console.error(portTaken());
  process.exit(1);
}

// Handlers go in before anything starts: workerd runs in a process group of its own, so a Ctrl-C
// during start-up must stop it from here or it would outlive this process.
const starting = new AbortController();
const encodersNamed = `${encoderCount === 1 ? "1 encoder" : `${encoderCount} encoders`} (${Array.from({ length: encoderCount }, (_, i) => encoderName(i)).join(", ")})`;
say(`Starting the local cloud, the Worker (workerd) and ${encodersNamed}…`);
const playback = playbackAnnouncer(say);
const started = startStack({
  databaseUrl: process.env.DATABASE_URL,
  dataDir: DATA_DIR,
  owner: { api: `http://127.0.0.1:${port}` },
  redisUrl: process.env.REDIS_URL,
  workerPort: port,
  encoder: { kind: "process", count: encoderCount, allowLoopbackSources: true, workDir: join(DATA_DIR, "encoder") },
  log: (source, line) => {
    playback.seen(line);
    if (verbose || source === "supervisor" || isJobStageLine(line) || /error|ready|listening|reloaded/i.test(line))
      say(`[${source}] ${line}`);
  },
  signal: starting.signal,
  watch: true,
});
// Made beside the start (only the first run has anything to make), and given up with it: a run
// refused the data directory, or stopped, kills FFmpeg and leaves no partial file.
const samplesDir = join(DATA_DIR, "samples");
const samplesMade = prepareSampleMedia(samplesDir, starting.signal);
samplesMade.catch(() => undefined);
let sweep: ReturnType<typeof setInterval> | undefined;
let samples: Awaited<ReturnType<typeof startFileServer>> | undefined;
let stopping = false;
/** This run's write of dev-state.json, if it made one: a refused run must leave the running one's alone. */
let published: Promise<void> | undefined;
async function shutDown(code: number) {
  if (stopping) return;
  stopping = true;
  starting.abort();
  clearInterval(sweep);
  say("\nStopping…");
  // Gone first: from now on it names services that are stopping.
  if (published) {
    await published.catch(() => undefined);
    await removeDevState();
  }
  await samplesMade.catch(() => undefined);
  // An aborted start stops what it had started before it rejects; a finished one is stopped here.
  const stack = await started.catch(() => undefined);
  await samples?.stop();
  await stack?.stop();
  process.exit(code);
}
/**
 * One Ctrl-C arrives twice: from the terminal, to the whole foreground group, and from npm,
 * which passes SIGINT and SIGTERM on to its script. A person's second press comes later.
 */
const ONE_KEYPRESS_MS = 500;
let signalledAt = 0;
/**
 * A second signal stops at once: the stop under way waits on something that does not answer.
 * The Worker's server and the encoder end with this process (their preload), and PostgreSQL is
 * told to shut down as it exits.
 */
function onSignal() {
  if (stopping) {
    if (Date.now() - signalledAt < ONE_KEYPRESS_MS) return;
    console.error("Stopping at once (a second signal).");
    process.exit(1);
  }
  signalledAt = Date.now();
  void shutDown(0);
}
// SIGHUP: its terminal closed, which would otherwise end it with PostgreSQL left running and the data dir locked.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, onSignal);

/** One step of the start: once a stop has begun, the start goes no further (shutDown stops what it started). */
async function step<T>(work: Promise<T>): Promise<T> {
  const value = await work;
  starting.signal.throwIfAborted();
  return value;
}

/** Where the embedded PostgreSQL's data is, and why there when that is not under DATA_DIR. */
function embeddedPostgresData(dir: string | undefined): string {
  const pointer = join(DATA_DIR, "postgres");
  if (dir === undefined || dir === pointer) return `embedded PostgreSQL, data in ${pointer}`;
  const why = dir.startsWith(SHARED_DIR) ? `: PostgreSQL runs as the user postgres, who cannot reach ${DATA_DIR}` : "";
  return `embedded PostgreSQL, data in ${dir} (linked from ${pointer}${why})`;
}

/** Why the start failed, for a person: what to change, named. */
function whyNotStarted(err: unknown): unknown {
  // Taken between the check above and the Worker's start.
  if (err instanceof PortInUse) return portTaken();
  if (err instanceof PostgresNotStarted) return err.message;
  if (err instanceof Unreachable) {
    const variable = err.service === "database" ? "DATABASE_URL" : "REDIS_URL";
    return process.env[variable]
      ? `${variable}: ${err.message}. Check it, or leave it unset for the local stand-in.`
      : err.message;
  }
  return err;
}

try {
  const stack = await step(started);
  const { info } = stack;
  void stack.workerExited.then(({ code, signal }) => {
    if (stopping) return;
    console.error(
      `The Worker's server exited (${signal ?? `code ${code}`}); with nothing serving the API, npm run dev stops.`,
    );
    void shutDown(1);
  });
  published = writeDevState({ databaseUrl: info.databaseUrl, redis: info.cloud.redis, apiUrl: info.apiUrl });
  await step(published);

  const admin = openAdmin({ databaseUrl: info.databaseUrl, redis: info.cloud.redis });
  const { accountId, apiKey } = await step(admin.createAccount(plan));
  playback.ready(info.apiUrl, apiKey);
  // A dashboard sign-in for the dev account; each run makes a new account, so the email names it.
  const dashboardUser = {
    email: `dev-${accountId.slice(0, 8)}@example.com`,
    password: randomBytes(12).toString("base64url"),
  };
  await step(admin.addUser(accountId, dashboardUser));
  await step(admin.close());

  await step(samplesMade);
  const clip = join(samplesDir, SAMPLE_CLIP);
  const logo = join(samplesDir, SAMPLE_LOGO);
  samples = await step(startFileServer({ files: [clip, logo] }));
  const timeline = await step(
    writeSampleTimeline(samplesDir, plan, { clip: samples.url(clip), logo: samples.url(logo) }),
  );

  // Nothing local fires cron triggers; fire the scheduled handler (the stale-job sweep) as the cron would.
  sweep = setInterval(() => {
    fetch(`${info.apiUrl}/cdn-cgi/handler/scheduled`).catch(() => undefined);
  }, 60_000);

  const database = process.env.DATABASE_URL ? "DATABASE_URL" : embeddedPostgresData(info.cloud.postgresDataDir);
  const steps = trySequence({
    apiUrl: info.apiUrl,
    apiKey,
    sampleUrl: samples.url(clip),
    timelineFile: timeline.path,
    timelineSays: timeline.summary,
    cli: join(PROJECT_ROOT, "bin", "vep.mjs"),
  });
  say(`
Ready.
  API        ${info.apiUrl}/api/v1
  Encoders   ${info.encoderUrl}  ${encodersNamed} behind a local stand-in for Fly.io's proxy
             (loopback sources and webhooks ALLOWED: development settings, never in production; ENCODERS=N npm run dev for N)
  Database   ${database}
             ${info.databaseUrl}
  Samples    ${samples.url(clip)} (10 s, 720p), ${samples.url(logo)}
  Account    ${accountId} (${plan} plan; DEV_PLAN=pro npm run dev for another)
  API key    ${apiKey}
  Dashboard  ${info.apiUrl}/dashboard
  Sign in    ${dashboardUser.email}  password ${dashboardUser.password}

Try it (paste into a shell):
${steps.map((line) => `  ${line}`).join("\n")}

More keys and accounts: npm run admin -- account create --plan pro
Every line of workerd, encoder and database output: VERBOSE=1 npm run dev
Press Ctrl-C to stop.`);
} catch (err) {
  // A signal during start-up already has shutDown under way; anything else is a real failure.
  if (!stopping) {
    if (err instanceof DataDirInUse) {
      const { pid, about } = err.holder;
      console.error(
        `npm run dev is already running on ${err.dataDir} (pid ${pid}${about.api ? `, API ${about.api}` : ""}).\n` +
          `Stop that one first (Ctrl-C in its terminal, or kill ${pid}), or give this one a data directory and a port of its own: ` +
          `DATA_DIR=/some/dir PORT=${otherPort} npm run dev.`,
      );
      // The refused start stopped what it had begun; the samples it was making go too.
      starting.abort();
      await samplesMade.catch(() => undefined);
      process.exit(1);
    }
    console.error(whyNotStarted(err));
    await shutDown(1);
  }
}
