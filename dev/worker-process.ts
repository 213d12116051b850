import { spawn } from "node:child_process";
import { EXIT_WITH_PARENT_ARGS, exitWithParentEnv } from "./exit-with-parent";
import { PROJECT_ROOT } from "./state";

export interface WorkerProcess {
  url: string;
  /** The serving process's pid, which is also its process group's id. */
  pid: number;
  stop(): Promise<void>;
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
}): Promise<WorkerProcess> {
  const args = [...EXIT_WITH_PARENT_ARGS, `${PROJECT_ROOT}/dev/worker-serve.mjs`, "--port", String(opts.port), ...(opts.watch ? ["--watch"] : [])];
  const child = spawn(process.execPath, args, {
    cwd: opts.projectRoot ?? PROJECT_ROOT,
    // The bindings go through the environment rather than the command line, where `ps` would show the secrets.
    env: { ...process.env, ...WRANGLER_ENV, ...exitWithParentEnv("group"), WORKER_DEV_VARS: JSON.stringify(opts.vars) },
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const log = opts.log ?? (() => undefined);
  child.stdout.on("data", (d) => String(d).split("\n").filter(Boolean).forEach(log));
  child.stderr.on("data", (d) => String(d).split("\n").filter(Boolean).forEach(log));

  const url = `http://127.0.0.1:${opts.port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.pid === undefined) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    }, 3000);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the Worker's server exited with code ${child.exitCode}`);
    if (opts.signal?.aborted) {
      await stop();
      throw new Error("stopped while starting");
    }
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return { url, pid: child.pid!, stop };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error("the Worker's server did not become ready within 60 s");
}
