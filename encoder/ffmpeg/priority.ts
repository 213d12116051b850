import { readdir, readFile, writeFile } from "node:fs/promises";
import { setPriority } from "node:os";

/** A session's niceness: the lowest of its runs' (the most urgent one's), 0 with none. */
export function sessionNicenessOf(runs: Iterable<number>): number {
  let lowest: number | undefined;
  for (const niceness of runs) lowest = lowest === undefined ? niceness : Math.min(lowest, niceness);
  return lowest ?? 0;
}

/** Whether this process leads its session: the fourth field after the command in /proc/self/stat. */
async function leadsItsSession(): Promise<boolean> {
  const stat = await readFile("/proc/self/stat", "utf8").catch(() => "");
  const session = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
  return session === process.pid;
}

/**
 * Linux's autogroup scheduling shares the CPU between sessions equally, whatever the niceness of
 * their processes, so a run's niceness orders it only within its own session. An encoder that
 * leads its session (each local encoder does) also sets the session's niceness, through its
 * autogroup, to the lowest of its runs': an encoder running only a stream's later parts yields
 * the cores to one making a stream's start (docs/benchmarks.md#benchplayable). Until enabled, and
 * in a process that does not lead its session, nothing is written.
 */
export function sessionPriority(autogroup = "/proc/self/autogroup", leads = leadsItsSession) {
  const runs = new Map<number, number>();
  let enabled = false;
  let applied = 0;
  let leader: Promise<boolean> | undefined;
  let turn = Promise.resolve();
  const apply = () => {
    turn = turn
      .then(async () => {
        const niceness = sessionNicenessOf(runs.values());
        if (!enabled || niceness === applied) return;
        leader ??= leads();
        if (!(await leader)) return;
        await writeFile(autogroup, String(niceness));
        applied = niceness;
      })
      // A kernel without autogroup, or a lowering back refused to an unprivileged user: the order
      // between sessions is lost, and nothing else; the next change tries again.
      .catch(() => undefined);
    return turn;
  };
  return {
    /** From now on (the encoder's main, SESSION_NICENESS): until then nothing is written. */
    enable() {
      enabled = true;
      return apply();
    },
    /** A run begun at `niceness`. */
    add(pid: number, niceness: number) {
      runs.set(pid, niceness);
      return apply();
    },
    /** A run's niceness changed, if it is one of this session's runs. */
    change(pid: number, niceness: number) {
      if (!runs.has(pid)) return turn;
      runs.set(pid, niceness);
      return apply();
    },
    /** A run ended. */
    end(pid: number) {
      return runs.delete(pid) ? apply() : turn;
    },
  };
}

/** This process's session: every FFmpeg and ffprobe run of the encoder (ffmpeg/run.ts). */
export const encoderSession = sessionPriority();

/**
 * Sets the niceness of every thread of a running process. Linux keeps a niceness per thread
 * (setpriority on a pid reaches only its main thread), and FFmpeg's encoders run in threads made
 * at its start, so each is set. Raising niceness needs no privilege. A thread or a process gone
 * meanwhile is nothing to set.
 */
export async function renice(pid: number, niceness: number): Promise<void> {
  let threads: number[];
  try {
    threads = (await readdir(`/proc/${pid}/task`)).map(Number);
  } catch {
    threads = [pid];
  }
  for (const thread of threads) {
    try {
      setPriority(thread, niceness);
    } catch (err) {
      // Node's SystemError: its code is ERR_SYSTEM_ERROR, the system's in `info`.
      if ((err as { info?: { code?: string } }).info?.code !== "ESRCH") throw err;
    }
  }
  await encoderSession.change(pid, niceness);
}
