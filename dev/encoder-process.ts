import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { EXIT_WITH_PARENT_ARGS, exitWithParentEnv } from "./exit-with-parent";
import { ENCODER_NODE_FLAGS } from "./node-flags";
import { PROJECT_ROOT } from "./state";
import { oneAtATime, watchTrees } from "./watch-trees.mjs";

/** How an encoder process ended. */
export interface EncoderExit {
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Its last lines on stderr, where a crash says why. */
  stderrTail: string[];
  uptimeMs: number;
}

/** Lines of stderr kept as they come, and shown once summarised. */
const STDERR_KEPT_LINES = 200;
const STDERR_SHOWN_LINES = 12;
const FRAMES_SHOWN = 2;
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

/**
 * The end of what a process wrote on stderr, as a report shows it: blank lines dropped, and each
 * stack trace cut to its first frames, so that the error's own lines (tsx's "ERROR: Unexpected
 * …" with its file and line, an exception's message) fit rather than the depths of the loader.
 */
export function summariseStderr(lines: string[]): string[] {
  const shown: string[] = [];
  let frames = 0;
  let elided = 0;
  const flush = () => {
    if (elided > 0) shown.push(`    … ${elided} more frame${elided === 1 ? "" : "s"}`);
    elided = 0;
  };
  for (const line of lines) {
    if (!line.trim()) continue;
    if (/^\s+at /.test(line)) {
      if (++frames > FRAMES_SHOWN) elided++;
      else shown.push(line);
      continue;
    }
    flush();
    frames = 0;
    shown.push(line);
  }
  flush();
  return shown.slice(-STDERR_SHOWN_LINES);
}

const howItEnded = (exit: EncoderExit) =>
  `pid ${exit.pid} ${exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`} after ${(exit.uptimeMs / 1000).toFixed(1)} s.`;

const lastWords = (exit: EncoderExit) =>
  exit.stderrTail.length > 0
    ? ["  its last stderr lines:", ...exit.stderrTail.map((line) => `    ${line}`)]
    : ["  it wrote nothing to stderr."];

/** The report printed when the encoder dies unexpectedly: what ended it, its last words, what happens next. */
export function describeCrash(exit: EncoderExit, restartInMs: number, port: number): string[] {
  return [
    `ENCODER CRASHED: ${howItEnded(exit)}`,
    ...lastWords(exit),
    `  restarting it on port ${port} ${restartInMs > 0 ? `in ${restartInMs / 1000} s` : "now"}; QStash delivers the jobs it had in flight again.`,
  ];
}

/**
 * The project's directories the encoder is built from: it imports nothing of the project's
 * outside them (test/unit/encoder/supervisor.test.ts follows its imports to check).
 */
export const ENCODER_SOURCE_TREES = ["encoder", "domain"];

/** The report printed when an encoder started after a change dies before it answers. */
export function describeFailedReload(exit: EncoderExit): string[] {
  return [
    `the encoder did not start after the change: ${howItEnded(exit)}`,
    ...lastWords(exit),
    "  the next change starts it again; until then no job is encoded.",
  ];
}

interface Run {
  pid: number;
  ready: Promise<void>;
  exited: Promise<EncoderExit>;
  stop(): Promise<void>;
}

function startRun(opts: {
  port: number;
  env: Record<string, string>;
  log: (source: string, line: string) => void;
  projectRoot: string;
  cpu?: string;
}): Run {
  const started = Date.now();
  const node = [
    process.execPath,
    ...ENCODER_NODE_FLAGS,
    ...EXIT_WITH_PARENT_ARGS,
    "--import",
    "tsx",
    "encoder/main.ts",
  ];
  // taskset execs node in its own place (same pid), and the FFmpeg it starts inherits the affinity.
  const [command, ...args] = opts.cpu === undefined ? node : ["taskset", "-c", opts.cpu, ...node];
  const child = spawn(command, args, {
    cwd: opts.projectRoot,
    env: { ...process.env, ...opts.env, PORT: String(opts.port), HOST: "127.0.0.1", ...exitWithParentEnv("process") },
    // A group of its own, out of the terminal's reach: a Ctrl-C that ended it before the runner
    // stops it would read as a crash, and the encoder would be restarted while everything stops.
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  // The encoder and the FFmpeg it runs.
  const killGroup = () => {
    // Never group 0: that is this process's own.
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // gone already
    }
  };
  const tail: string[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => opts.log("encoder", line));
  createInterface({ input: child.stderr }).on("line", (line) => {
    tail.push(line);
    if (tail.length > STDERR_KEPT_LINES) tail.shift();
    opts.log("encoder", line);
  });
  // "close" comes after the process's stdio has been read to the end, so the tail is complete.
  const exited = new Promise<EncoderExit>((resolve) => {
    child.once("close", (code, signal) =>
      resolve({ pid: child.pid ?? 0, code, signal, stderrTail: summariseStderr(tail), uptimeMs: Date.now() - started }),
    );
  });
  let ended = false;
  void exited.then(() => (ended = true));

  const url = `http://127.0.0.1:${opts.port}`;
  const ready = (async () => {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (ended) {
        const exit = await exited;
        throw new Error(
          `encoder exited before it was ready (${exit.signal ?? `code ${exit.code}`}): ${exit.stderrTail.slice(-3).join(" | ")}`,
        );
      }
      if (
        await fetch(`${url}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        return;
      await new Promise((r) => setTimeout(r, 200));
    }
    killGroup();
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
      const timer = setTimeout(killGroup, 3000);
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
 *
 * With `watch` (`npm run dev`), a change to its sources stops it and starts it again on them.
 * One that then dies before it answers (a syntax error) is reported and left until the next
 * change, rather than restarted into the same error.
 */
export async function superviseEncoder(opts: {
  port: number;
  env: Record<string, string>;
  log?: (source: string, line: string) => void;
  /** Told the pid of each encoder process as it is started, the first and every restart. */
  onStart?: (pid: number) => void;
  /** Restart it when a file under ENCODER_SOURCE_TREES changes. */
  watch?: boolean;
  /** The project whose encoder runs: this one unless given. */
  projectRoot?: string;
  /** Held to these CPUs (taskset's list), it and the FFmpeg it runs; every core unless given. */
  cpu?: string;
}): Promise<SupervisedEncoder> {
  const log = opts.log ?? (() => undefined);
  const projectRoot = opts.projectRoot ?? PROJECT_ROOT;
  const say = (line: string) => log("supervisor", line);
  const crashes: EncoderExit[] = [];
  const readyListeners = new Set<(pid: number) => void>();
  // Runs stopped on purpose for a reload, and runs a reload started that have not answered yet.
  const retired = new WeakSet<Run>();
  const onTrial = new WeakSet<Run>();
  let stopping = false;
  let streak = 0;
  let restartTimer: NodeJS.Timeout | undefined;
  let unwatch: () => void = () => undefined;
  const start = () => {
    const run = startRun({ port: opts.port, env: opts.env, log, projectRoot, cpu: opts.cpu });
    opts.onStart?.(run.pid);
    return run;
  };
  let current = start();
  let readyPid = 0;

  const watch = (run: Run) => {
    void run.ready.then(
      () => {
        onTrial.delete(run);
        readyPid = run.pid;
        for (const listener of readyListeners) listener(run.pid);
      },
      () => undefined,
    );
    void run.exited.then((exit) => {
      if (stopping || retired.has(run)) return;
      if (onTrial.has(run)) {
        for (const line of describeFailedReload(exit)) say(line);
        return;
      }
      crashes.push(exit);
      streak = exit.uptimeMs < STABLE_RUN_MS ? streak + 1 : 1;
      const delay = restartDelayMs(streak);
      for (const line of describeCrash(exit, delay, opts.port)) say(line);
      restartTimer = setTimeout(() => {
        if (stopping || reload.running()) return;
        current = start();
        watch(current);
        current.ready.then(
          () => say(`encoder restarted: pid ${current.pid} is answering on port ${opts.port}.`),
          // One stopped with everything (Ctrl-C) before it answered did not fail.
          (err: Error) => {
            if (!stopping) say(`encoder restart failed: ${err.message}`);
          },
        );
      }, delay);
    });
  };

  /** Stops the encoder running now, if any, and starts one on the sources as they are. */
  const reload = oneAtATime(async () => {
    if (stopping) return;
    const started = Date.now();
    // A crash's pending restart is superseded by this one.
    clearTimeout(restartTimer);
    say(
      `a change in ${ENCODER_SOURCE_TREES.map((tree) => `${tree}/`).join(" or ")}: restarting the encoder; QStash delivers again the jobs it had in flight.`,
    );
    retired.add(current);
    await current.stop();
    if (stopping) return;
    current = start();
    onTrial.add(current);
    watch(current);
    await current.ready.then(
      () =>
        say(`encoder reloaded in ${Date.now() - started} ms: pid ${current.pid} is answering on port ${opts.port}.`),
      () => undefined,
    );
  });

  try {
    await current.ready;
  } catch (err) {
    await current.stop();
    throw err;
  }
  readyPid = current.pid;
  watch(current);
  if (opts.watch)
    unwatch = watchTrees({
      trees: ENCODER_SOURCE_TREES.map((tree) => join(projectRoot, tree)),
      onChange: () => void reload(),
    });

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
      unwatch();
      clearTimeout(restartTimer);
      readyListeners.clear();
      await current.stop();
    },
  };
}
