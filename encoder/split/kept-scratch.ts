import { link, mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";

/** How long a file stays on the disk of the encoder that made it, waiting for the task that reads it to come there. */
const KEEP_MS = 10 * 60_000;

/** A kept file, taken for one task: its path, until `release` deletes it. */
export interface TakenFile {
  path: string;
  bytes: number;
  release(): Promise<void>;
}

/**
 * The scratch files this encoder made and stored for a split job (the inputs it cut, the parts it
 * encoded), kept on its disk for the tasks of that job that come to it later
 * (docs/scaling.md#scratch-kept-where-it-was-made): such a task reads them from here instead of
 * downloading what this encoder uploaded. A file is used only while storage still holds the very
 * object this encoder stored (the same ETag): a later split of the job, or a part encoded again,
 * stores its own under the same key. Each is deleted once taken and used, or after `keepMs`; the
 * store's directory starts empty, as a new process owns none.
 */
export async function keptScratch(dir: string, keepMs = KEEP_MS) {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const kept = new Map<string, { path: string; etag: string; timer: NodeJS.Timeout }>();
  let made = 0;

  function forget(key: string): string | undefined {
    const file = kept.get(key);
    if (!file) return undefined;
    kept.delete(key);
    clearTimeout(file.timer);
    return file.path;
  }

  async function drop(key: string): Promise<void> {
    const path = forget(key);
    if (path) await rm(path, { force: true });
  }

  return {
    /**
     * Keeps the file at `path`, stored under `key` and tagged `etag` by storage, by a hard link:
     * the work dir it was made in goes when its delivery ends.
     */
    async keep(key: string, path: string, etag: string | undefined): Promise<void> {
      if (!etag) return;
      const copy = join(dir, String(++made));
      // On another file system there is no link to make; the task downloads the file as any would.
      if (
        !(await link(path, copy).then(
          () => true,
          () => false,
        ))
      )
        return;
      await drop(key);
      const timer = setTimeout(() => void drop(key), keepMs);
      timer.unref();
      kept.set(key, { path: copy, etag, timer });
    },

    /**
     * The file stored under `key`, when this encoder keeps it and storage's object is still the
     * one it stored (`storedTag` asks storage). Taken: it is the caller's to release.
     */
    async take(key: string, storedTag: () => Promise<string | undefined>): Promise<TakenFile | undefined> {
      const file = kept.get(key);
      if (!file) return undefined;
      const tag = await storedTag().catch(() => undefined);
      const path = forget(key);
      if (!path) return undefined;
      if (tag !== file.etag) {
        await rm(path, { force: true });
        return undefined;
      }
      const size = await stat(path).then(
        (s) => s.size,
        () => undefined,
      );
      return size === undefined ? undefined : { path, bytes: size, release: () => rm(path, { force: true }) };
    },

    drop,
  };
}

export type KeptScratch = Awaited<ReturnType<typeof keptScratch>>;
