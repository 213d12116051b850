import { execFile, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { chmod, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "../dev/cloud/free-port";
import { PROJECT_ROOT } from "../dev/state";

const run = promisify(execFile);
const READY_TIMEOUT_MS = 300_000;

/**
 * `npm run dev` as the README's quick start runs it: no DATABASE_URL or REDIS_URL (the embedded
 * PostgreSQL and the in-memory stand-ins), its data in a temporary DATA_DIR, in a process group
 * of its own that a Ctrl-C stops. What it prints goes to `logFile`.
 */
export async function startDevService(logFile: string) {
  const dataDir = await mkdtemp(join(tmpdir(), "bench-dev-"));
  await chmod(dataDir, 0o755); // as root, PostgreSQL runs as the user postgres
  const port = await freePort();
  const { DATABASE_URL: _db, REDIS_URL: _redis, VERBOSE: _verbose, ...inherited } = process.env;
  const env = { ...inherited, DATA_DIR: dataDir, PORT: String(port) };
  const child = spawn("npm", ["run", "dev"], {
    cwd: PROJECT_ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log = createWriteStream(logFile);
  let output = "";
  for (const stream of [child.stdout, child.stderr]) {
    stream.on("data", (d) => {
      if (output.length < 64 * 1024) output += d;
      log.write(d);
    });
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const stop = async () => {
    try {
      process.kill(-child.pid!, "SIGINT");
    } catch {
      // already gone
    }
    await exited;
    log.end();
    await rm(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!/Ready\.[\s\S]*Press Ctrl-C/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`npm run dev did not become ready:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const state = JSON.parse(await readFile(join(dataDir, "dev-state.json"), "utf8")) as {
    databaseUrl: string;
    apiUrl: string;
  };

  return {
    apiUrl: state.apiUrl,
    databaseUrl: state.databaseUrl,
    /** The admin CLI as the README shows it, against this service (found through DATA_DIR); `Output`: what it prints, unchecked. */
    async admin<Output = unknown>(args: string[]): Promise<Output> {
      const { stdout } = await run("npm", ["run", "-s", "admin", "--", ...args], { cwd: PROJECT_ROOT, env });
      return JSON.parse(stdout) as Output;
    },
    /** The encoder's pid now, as the data directory's lock records it (the supervisor keeps it current). */
    async encoderPid(): Promise<number> {
      const lock = JSON.parse(await readFile(join(dataDir, "in-use.json"), "utf8")) as {
        processes: { pid: number; group: boolean }[];
      };
      const encoder = lock.processes.find((p) => !p.group);
      if (!encoder) throw new Error("the lock records no encoder");
      return encoder.pid;
    },
    stop,
  };
}

export type DevService = Awaited<ReturnType<typeof startDevService>>;
