import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { EXIT_WITH_PARENT_ARGS, exitWithParentEnv } from "./exit-with-parent";
import { PROJECT_ROOT } from "./state";

/** How an encoder process ended. */
export interface EncoderExit {
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Its last lines on stderr, where a crash says why. */
  stderrTail: string[];
  uptimeMs: number;
}

const STDERR_TAIL_LINES = 12;
const READY_TIMEOUT_MS = 30_000;
/** A run that lasted this long was not part of a crash loop: the next restart is immediate again. */
const STABLE_RUN_MS = 30_000;
const MAX_RESTART_DELAY_MS = 30_000;

/**
 * How long to wait before restarting after the `streak`-th crash in a row that came soon after
 * its start: the first at once, then 1 s, 2 s, 4 s … up to 30 s, so a crash loop does not spin.
 */
export function restartDelayMs(streak: number): number {
  return streak <= 1 ? 0 : Math.min(1000 * 2 ** (streak - 2), MAX_RESTART_DELAY_MS);
}

/** The report printed when the encoder dies unexpectedly: what ended it, its last words, what happens next. */
export function describeCrash(exit: EncoderExit, restartInMs: number, port: number): string[] {
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
  return [
    `ENCODER CRASHED: pid ${exit.pid} ${how} after ${(exit.uptimeMs / 1000).toFixed(1)} s.`,
    ...(exit.stderrTail.length > 0 ? ["  its last stderr lines:", ...exit.stderrTail.map((l) => `    ${l}`)] : ["  it wrote nothing to stderr."]),
    `  restarting it on port ${port} ${restartInMs > 0 ? `in ${restartInMs / 1000} s` : "now"}; QStash delivers the jobs it had in flight again.`,
  ];
}

interface Run {
  pid: number;
  ready: Promise<void>;
  exited: Promise<EncoderExit>;
  stop(): Promise<void>;
}

function startRun(opts: { port: number; env: Record<string, string>; log: (source: string, line: string) => void }): Run {
  const started = Date.now();
  const child = spawn(process.execPath, [...EXIT_WITH_PARENT_ARGS, "--import", "tsx", "encoder/main.ts"], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...opts.env, PORT: String(opts.port), HOST: "127.0.0.1", ...exitWithParentEnv("process") },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const tail: string[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => opts.log("encoder", line));
  createInterface({ input: child.stderr }).on("line", (line) => {
    tail.push(line);
    if (tail.length > STDERR_TAIL_LINES) tail.shift();
    opts.log("encoder", line);
  });
  // "close" comes after the process's stdio has been read to the end, so the tail is complete.
  const exited = new Promise<EncoderExit>((resolve) => {
    child.once("close", (code, signal) => resolve({ pid: child.pid ?? 0, code, signal, stderrTail: [...tail], uptimeMs: Date.now() - started }));
  });
  let ended = false;
  void exited.then(() => (ended = true));

  const url = `http://127.0.0.1:${opts.port}`;
  const ready = (async () => {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (ended) {
        const exit = await exited;
        throw new Error(`encoder exited before it was ready (${exit.signal ?? `code ${exit.code}`}): ${exit.stderrTail.slice(-3).join(" | ")}`);
      }
      if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    child.kill("SIGKILL");
    throw new Error(`encoder did not become ready within ${READY_TIMEOUT_MS / 1000} s`);
  })();
  ready.catch(() => undefined);

  return {
    pid: child.pid ?? 0,
    ready,
    exited,
    async stop() {
      if (ended) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface SupervisedEncoder {
  url: string;
  /** The pid of the encoder running now. */
  pid(): number;
  /** Every unexpected exit so far, oldest first. */
  crashes(): EncoderExit[];
  /** Resolves once an encoder other than `pid` is up and answering. */
  readyAfter(pid: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The encoder as a plain Node process, supervised as Fly.io supervises its machine's process:
 * an unexpected exit is reported loudly (how it ended and its last stderr lines) and the encoder
 * is started again on the same port, with a growing pause when it keeps crashing right after
 * starting. Resolves once the first encoder answers; a first start that fails rejects.
 */
export async function superviseEncoder(opts: {
  port: number;
  env: Record<string, string>;
  log?: (source: string, line: string) => void;
  /** Told the pid of each encoder process as it is started, the first and every restart. */
  onStart?: (pid: number) => void;
}): Promise<SupervisedEncoder> {
  const log = opts.log ?? (() => undefined);
  const say = (line: string) => log("supervisor", line);
  const crashes: EncoderExit[] = [];
  const readyListeners = new Set<(pid: number) => void>();
  let stopping = false;
  let streak = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  const start = () => {
    const run = startRun({ port: opts.port, env: opts.env, log });
    opts.onStart?.(run.pid);
    return run;
  };
  let current = start();
  let readyPid = 0;

  const watch = (run: Run) => {
    void run.ready.then(() => {
      readyPid = run.pid;
      for (const listener of readyListeners) listener(run.pid);
    }, () => undefined);
    void run.exited.then((exit) => {
      if (stopping) return;
      crashes.push(exit);
      streak = exit.uptimeMs < STABLE_RUN_MS ? streak + 1 : 1;
      const delay = restartDelayMs(streak);
      for (const line of describeCrash(exit, delay, opts.port)) say(line);
      restartTimer = setTimeout(() => {
        if (stopping) return;
        current = start();
        watch(current);
        current.ready.then(
          () => say(`encoder restarted: pid ${current.pid} is answering on port ${opts.port}.`),
          (err: Error) => say(`encoder restart failed: ${err.message}`),
        );
      }, delay);
    });
  };

  try {
    await current.ready;
  } catch (err) {
    await current.stop();
    throw err;
  }
  readyPid = current.pid;
  watch(current);

  return {
    url: `http://127.0.0.1:${opts.port}`,
    pid: () => current.pid,
    crashes: () => [...crashes],
    readyAfter(pid, timeoutMs = 60_000) {
      if (readyPid !== 0 && readyPid !== pid && readyPid === current.pid) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          readyListeners.delete(listener);
          reject(new Error(`no encoder other than pid ${pid} became ready within ${timeoutMs / 1000} s`));
        }, timeoutMs);
        const listener = (readyNow: number) => {
          if (readyNow === pid) return;
          clearTimeout(timer);
          readyListeners.delete(listener);
          resolve();
        };
        readyListeners.add(listener);
      });
    },
    async stop() {
      stopping = true;
      clearTimeout(restartTimer);
      readyListeners.clear();
      await current.stop();
    },
  };
}
