import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { EXIT_WITH_PARENT_ARGS, exitWithParentEnv } from "./exit-with-parent";
import { PROJECT_ROOT } from "./state";

export interface WorkerProcess {
  url: string;
  /** The serving process's pid, which is also its process group's id. */
  pid: number;
  /** Settles when the server's process ends, whether stop() ended it or not. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<void>;
}

/** False when no such process or group is left. */
function signal(target: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(target, name);
    return true;
  } catch {
    return false;
  }
}

/** Another server holds the port: the Worker's would fail to listen, and the other would answer for it. */
export class PortInUse extends Error {
  constructor(readonly port: number) {
    super(`port ${port} is in use`);
  }
}

/** Quiet and offline: no metrics, no banner, no fetches of Cloudflare's account data. */
export const WRANGLER_ENV = {
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
};

/**
 * Runs the Worker in workerd, from the bundle `wrangler deploy` would upload (see
 * dev/worker-serve.mjs). It gets its own process group so stopping it stops workerd too, which
 * otherwise outlives its parent; and that group ends when this process does, however it ends
 * (dev/exit-with-parent-preload.mjs).
 */
export async function startWorkerProcess(opts: {
  port: number;
  vars: Record<string, string>;
  log?: (line: string) => void;
  /** Aborting while waiting for it to be ready stops it: its process group is beyond Ctrl-C's reach. */
  signal?: AbortSignal;
  /** Build and load the Worker again when a file it is built from changes (`npm run dev`). */
  watch?: boolean;
  /** The project to build the Worker from: this one unless given. */
  projectRoot?: string;
  /** Open workerd's DevTools inspector on this port (bench/profile-worker.ts profiles the isolate through it). */
  inspectorPort?: number;
}): Promise<WorkerProcess> {
  const args = [
    ...EXIT_WITH_PARENT_ARGS,
    `${PROJECT_ROOT}/dev/worker-serve.mjs`,
    "--port",
    String(opts.port),
    ...(opts.watch ? ["--watch"] : []),
    ...(opts.inspectorPort === undefined ? [] : ["--inspector-port", String(opts.inspectorPort)]),
  ];
  const child = spawn(process.execPath, args, {
    cwd: opts.projectRoot ?? PROJECT_ROOT,
    // The bindings go through the environment rather than the command line, where `ps` would show the secrets.
    env: { ...process.env, ...WRANGLER_ENV, ...exitWithParentEnv("group"), WORKER_DEV_VARS: JSON.stringify(opts.vars) },
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const log = opts.log ?? (() => undefined);
  const url = `http://127.0.0.1:${opts.port}`;
  // Its own ready line, not any answer on the port: another server there answers /healthz too.
  let ready = false;
  let addressInUse = false;
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line === `Ready on ${url}`) ready = true;
    log(line);
  });
  const stderr = createInterface({ input: child.stderr }).on("line", (line) => {
    if (line.includes("ERR_ADDRESS_IN_USE")) addressInUse = true;
    log(line);
  });
  const stderrRead = once(stderr, "close");
  const exited = once(child, "exit").then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;

  const stop = async () => {
    if (child.pid === undefined) return;
    const group = -child.pid;
    if (!signal(group, "SIGTERM")) return; // nothing of it is left
    const timer = setTimeout(() => signal(group, "SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
    // What outlived a server killed outright (its workerd) goes too.
    signal(group, "SIGKILL");
  };

  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (hasExited()) {
      // Its last words may still be on their way from the pipe.
      await Promise.race([stderrRead, new Promise((r) => setTimeout(r, 2000))]);
      if (addressInUse) throw new PortInUse(opts.port);
      throw new Error(`the Worker's server exited with ${child.signalCode ?? `code ${child.exitCode}`}`);
    }
    if (opts.signal?.aborted) {
      await stop();
      throw new Error("stopped while starting");
    }
    if (ready && child.pid !== undefined) return { url, pid: child.pid, exited, stop };
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error("the Worker's server did not become ready within 60 s");
}
