import { readdir } from "node:fs/promises";
import { setPriority } from "node:os";

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
}
