import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { processCommand, processStartTime } from "./processes";

/** A PostgreSQL server process, named by pid and start time: its pid alone may since name another process. */
export type Postmaster = { pid: number; startedAt: string };

const STOP_TIMEOUT_MS = 30_000;

/**
 * Stops the postmaster, if it still runs, with a fast shutdown (SIGINT: sessions are ended, a
 * checkpoint written, nothing to recover at the next start), and waits until the process is gone.
 * It is named by pid and start time, not looked up again through its lock file: a terminal's
 * Ctrl-C reaches the server too, and the file goes a moment before the process does.
 */
export async function stopPostmaster(postmaster: Postmaster | undefined): Promise<void> {
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

/**
 * The postmaster serving dataDir, found through dataDir/postmaster.pid while that pid is a postgres
 * serving dataDir, else undefined: the file outlives a killed server, and its pid may since belong
 * to anyone. This also finds one no process of ours started.
 */
export async function runningPostmaster(dataDir: string): Promise<Postmaster | undefined> {
  const lockFile = await readFile(join(dataDir, "postmaster.pid"), "utf8").catch(() => "");
  const pid = Number(lockFile.split("\n")[0]);
  const command = await processCommand(pid);
  if (!command?.includes("postgres") || !command.includes(`-D ${dataDir}`)) return undefined;
  const startedAt = await processStartTime(pid);
  return startedAt === undefined ? undefined : { pid, startedAt };
}
