import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { processStartTime } from "./processes";

/** Who holds a data directory: its process, and whatever the holder chose to say about itself. */
export interface DataDirHolder {
  pid: number;
  /** processStartTime(pid) when the lock was taken. */
  started: string;
  about: Record<string, unknown>;
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

/**
 * Takes a data directory for this process alone: a second taker gets DataDirInUse naming the
 * holder. A lock whose process is gone (killed, or the machine restarted) is taken over: the
 * holder is the pair (pid, start time), so a pid reused by another process does not count.
 */
export async function lockDataDir(dataDir: string, about: Record<string, unknown> = {}): Promise<{ release: () => Promise<void> }> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, LOCK_NAME);
  const started = await processStartTime(process.pid);
  if (!started) throw new Error(`cannot tell when process ${process.pid} started`);
  const mine: DataDirHolder = { pid: process.pid, started, about };
  // Written whole under another name, then linked into place: link fails if the lock exists,
  // so a reader never sees a half-written lock and two takers cannot both succeed.
  const draft = join(dataDir, `.${LOCK_NAME}.${randomBytes(6).toString("hex")}`);
  await writeFile(draft, JSON.stringify(mine));
  try {
    for (;;) {
      try {
        await link(draft, file);
        return {
          release: async () => {
            const current = await readHolder(file);
            if (current?.pid === mine.pid && current.started === mine.started) await rm(file, { force: true });
          },
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const holder = await readHolder(file);
      if (holder && (await processStartTime(holder.pid)) === holder.started) throw new DataDirInUse(dataDir, holder);
      await rm(file, { force: true });
    }
  } finally {
    await rm(draft, { force: true });
  }
}

async function readHolder(file: string): Promise<DataDirHolder | null> {
  try {
    const value = JSON.parse(await readFile(file, "utf8"));
    return typeof value?.pid === "number" && typeof value?.started === "string" ? { pid: value.pid, started: value.started, about: value.about ?? {} } : null;
  } catch {
    return null;
  }
}
