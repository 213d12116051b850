import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { access } from "node:fs/promises";
import { vi } from "vitest";
import { PROJECT_ROOT } from "../../dev/state";

/** The dev-runner tests' common ground: `npm run dev` started and watched as a person runs it. */

/**
 * The environment of a run on `dataDir` (undefined: the checkout's .data), free of the developer's
 * own DATA_DIR, DATABASE_URL, REDIS_URL, VERBOSE and DEV_PLAN.
 */
export function devEnv(dataDir: string | undefined, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const {
    DATA_DIR: _data,
    DATABASE_URL: _db,
    REDIS_URL: _redis,
    VERBOSE: _verbose,
    DEV_PLAN: _plan,
    PORT: _port,
    ...env
  } = process.env;
  return { ...env, ...(dataDir ? { DATA_DIR: dataDir } : {}), ...extra };
}

export interface DevRun {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `npm run dev` in a terminal of its own (a process group), its output gathered; in `checkout`, this one unless given. */
export function spawnDev(env: NodeJS.ProcessEnv, checkout = PROJECT_ROOT): DevRun {
  const child = spawn("npm", ["run", "dev"], {
    cwd: checkout,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** What the terminal sends its foreground group on Ctrl-C. */
export const ctrlC = (child: ChildProcess) => process.kill(-child.pid!, "SIGINT");

/**
 * Ctrl-C that finds the run busy: its process is held (SIGSTOP) while the signal arrives, as a
 * loaded machine or a long task on its event loop holds it, and let go once `held` resolves.
 */
export async function ctrlCWhileBusy(child: ChildProcess, runPid: number, held: Promise<unknown>) {
  process.kill(runPid, "SIGSTOP");
  try {
    ctrlC(child);
    await held;
  } finally {
    try {
      process.kill(runPid, "SIGCONT");
    } catch {
      // killed meanwhile: what the caller's checks are there to catch
    }
  }
}

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 180_000,
): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await probe();
      if (value === undefined) throw new Error(`timed out waiting for ${what}`);
      return value;
    },
    { timeout: timeoutMs, interval: 200 },
  );
}

/** Its output once it has printed the ready banner; a run that ends first, or takes too long, fails with what it printed. */
export async function readyBanner(dev: DevRun): Promise<string> {
  const printed = waitFor("the ready banner", () =>
    /Ready\.[\s\S]*Press Ctrl-C/.test(dev.output()) ? dev.output() : undefined,
  );
  const ended = dev.exited.then((code) => {
    throw new Error(`npm run dev exited (code ${code}) before it was ready`);
  });
  return Promise.race([printed, ended]).catch((err: Error) => {
    throw new Error(`${err.message}; it printed:\n${dev.output()}`);
  });
}

export function processesMatching(pattern: string): string[] {
  try {
    return execFileSync("pgrep", ["-af", pattern], { encoding: "utf8" }).split("\n").filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/**
 * Command lines of live processes serving the Worker on `port`: dev/worker-serve.mjs (`--port
 * 8787`) and its workerd (`127.0.0.1:8787`); the port whole, as another file's stack may run meanwhile.
 */
export const workerOn = (port: number) => processesMatching(`(worker-serve|workerd).*[ :]${port}( |$)`);

/** The embedded PostgreSQL serving `dataDir`'s database, if one runs. */
export const postgresOf = (dataDir: string) => processesMatching(`postgres -D ${dataDir}/postgres`);

export async function listening(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/healthz`).then(
    () => true,
    () => false,
  );
}

export const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
