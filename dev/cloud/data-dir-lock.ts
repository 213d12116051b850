import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { processStartTime } from "./processes";

/**
 * A process the holder started that must not outlive it (the Worker's process group, the
 * encoder): a run that takes the lock over from a holder that is gone stops it first.
 */
interface HeldProcess {
  pid: number;
  /** processStartTime(pid) when it was recorded. */
  started: string;
  /** Its pid is also its process group's id, and the whole group goes. */
  group: boolean;
}

/** Who holds a data directory: its process, and whatever the holder chose to say about itself. */
export interface DataDirHolder {
  pid: number;
  /** processStartTime(pid) when the lock was taken. */
  started: string;
  about: Record<string, unknown>;
  processes: HeldProcess[];
}

export interface DataDirLock {
  /** Records the processes the holder runs now (replacing the previous record). */
  hold(processes: { pid: number; group: boolean }[]): Promise<void>;
  release(): Promise<void>;
}

export class DataDirInUse extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: DataDirHolder,
  ) {
    super(`${dataDir} is in use by process ${holder.pid}`);
  }
}

const LOCK_NAME = "in-use.json";

const draftName = (dataDir: string) => join(dataDir, `.${LOCK_NAME}.${randomBytes(6).toString("hex")}`);

/**
 * Takes a data directory for this process alone: a second taker gets DataDirInUse naming the
 * holder. A lock whose process is gone (killed, or the machine restarted) is taken over: the
 * holder is the pair (pid, start time), so a pid reused by another process does not count.
 * The processes that holder recorded and left running are stopped first.
 */
export async function lockDataDir(dataDir: string, about: Record<string, unknown> = {}): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, LOCK_NAME);
  const started = await processStartTime(process.pid);
  if (!started) throw new Error(`cannot tell when process ${process.pid} started`);
  const mine: DataDirHolder = { pid: process.pid, started, about, processes: [] };
  // Written whole under another name, then linked into place: link fails if the lock exists,
  // so a reader never sees a half-written lock and two takers cannot both succeed.
  const draft = draftName(dataDir);
  await writeFile(draft, JSON.stringify(mine));
  try {
    for (;;) {
      try {
        await link(draft, file);
        return ownLock(dataDir, file, mine);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const holder = await readHolder(file);
      if (holder && (await isAlive(holder))) throw new DataDirInUse(dataDir, holder);
      if (holder) await stopLeftovers(holder.processes);
      await rm(file, { force: true });
    }
  } finally {
    await rm(draft, { force: true });
  }
}

/** The process holding dataDir now, or null: no lock, or one whose process is gone. */
export async function liveHolder(dataDir: string): Promise<DataDirHolder | null> {
  const holder = await readHolder(join(dataDir, LOCK_NAME));
  return holder && (await isAlive(holder)) ? holder : null;
}

/** By pid and start time: a pid alone may since name another process. */
const isAlive = async (holder: DataDirHolder) => (await processStartTime(holder.pid)) === holder.started;

function ownLock(dataDir: string, file: string, mine: DataDirHolder): DataDirLock {
  const isMine = (holder: DataDirHolder | null) => holder?.pid === mine.pid && holder.started === mine.started;
  // One change at a time, in the order asked: a record still being written when the release
  // comes (an encoder restarted as the run stops) would otherwise put the lock back after it.
  let released = false;
  let last: Promise<void> = Promise.resolve();
  const inTurn = (change: () => Promise<void>) => (last = last.then(change, change));
  return {
    hold(processes) {
      return inTurn(async () => {
        if (released) return;
        const held = await Promise.all(
          processes.map(async ({ pid, group }) => ({ pid, group, started: await processStartTime(pid) })),
        );
        mine.processes = held.filter((p): p is HeldProcess => p.started !== undefined);
        // Replaced whole (rename is atomic): a reader sees the old record or the new one.
        const draft = draftName(dataDir);
        await writeFile(draft, JSON.stringify(mine));
        await rename(draft, file);
      });
    },
    release() {
      return inTurn(async () => {
        released = true;
        if (isMine(await readHolder(file))) await rm(file, { force: true });
      });
    },
  };
}

const LEFTOVER_STOP_MS = 5000;

/**
 * Stops what a killed holder left running: SIGTERM (the stop their own handlers know), then
 * SIGKILL for whatever is still there after a while. A process whose pid now names another
 * process (its start time differs) is not touched. A group is signalled even when its leader is
 * gone, as long as its pid names no other process: the kernel hands out no pid still in use as
 * a group's id, so a group by that id is still the holder's.
 */
async function stopLeftovers(processes: HeldProcess[]): Promise<void> {
  const targets: number[] = [];
  for (const p of processes) {
    const started = await processStartTime(p.pid);
    if (started === p.started || (p.group && started === undefined)) targets.push(p.group ? -p.pid : p.pid);
  }
  const signal = (target: number, sig: NodeJS.Signals | 0) => {
    try {
      process.kill(target, sig);
      return true;
    } catch {
      return false; // gone
    }
  };
  let left = targets.filter((t) => signal(t, "SIGTERM"));
  const deadline = Date.now() + LEFTOVER_STOP_MS;
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = left.filter((t) => signal(t, 0));
  }
  for (const target of left) signal(target, "SIGKILL");
}

async function readHolder(file: string): Promise<DataDirHolder | null> {
  try {
    const value = JSON.parse(await readFile(file, "utf8"));
    if (typeof value?.pid !== "number" || typeof value?.started !== "string") return null;
    const processes = Array.isArray(value.processes) ? value.processes.filter(isHeldProcess) : [];
    return { pid: value.pid, started: value.started, about: value.about ?? {}, processes };
  } catch {
    return null;
  }
}

/** Never pid 1 or below: as a group, -1 would signal every process there is. */
function isHeldProcess(value: unknown): value is HeldProcess {
  const p = value as HeldProcess;
  return Number.isInteger(p?.pid) && p.pid > 1 && typeof p.started === "string" && typeof p.group === "boolean";
}
