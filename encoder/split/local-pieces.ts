import { link, mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";

/** How long a piece stays on the disk of the encoder that cut it, waiting for its part to come there. */
const KEEP_PIECE_MS = 10 * 60_000;

/** A kept piece, taken for one encode: its path, until `release` deletes it. */
export interface TakenPiece {
  path: string;
  bytes: number;
  release(): Promise<void>;
}

/**
 * The inputs this encoder cut and stored for a split job, kept on its disk for the tasks of that
 * job that come to it later (docs/scaling.md#inputs-kept-where-they-were-cut): such a task reads
 * its input from here instead of downloading what this encoder uploaded. A piece is used only
 * while storage still holds the very object this encoder stored (the same ETag): a later split
 * of the job, by any encoder, stores its own under the same key. Each is deleted once taken and
 * encoded, or after `keepMs`; the store's directory starts empty, as a new process owns none.
 */
export async function localPieces(dir: string, keepMs = KEEP_PIECE_MS) {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const kept = new Map<string, { path: string; etag: string; timer: NodeJS.Timeout }>();
  let made = 0;

  function forget(key: string): string | undefined {
    const piece = kept.get(key);
    if (!piece) return undefined;
    kept.delete(key);
    clearTimeout(piece.timer);
    return piece.path;
  }

  async function drop(key: string): Promise<void> {
    const path = forget(key);
    if (path) await rm(path, { force: true });
  }

  return {
    /**
     * Keeps the input at `path`, stored under `key` and tagged `etag` by storage, by a hard link:
     * the job's work dir, where it was cut, goes when the job's delivery ends.
     */
    async keep(key: string, path: string, etag: string | undefined): Promise<void> {
      if (!etag) return;
      const copy = join(dir, String(++made));
      // On another file system there is no link to make; the task downloads its input as any would.
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
     * The input stored under `key`, when this encoder keeps it and storage's object is still the
     * one it stored (`storedTag` asks storage). Taken: it is the caller's to release.
     */
    async take(key: string, storedTag: () => Promise<string | undefined>): Promise<TakenPiece | undefined> {
      const piece = kept.get(key);
      if (!piece) return undefined;
      const tag = await storedTag().catch(() => undefined);
      const path = forget(key);
      if (!path) return undefined;
      if (tag !== piece.etag) {
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

export type LocalPieces = Awaited<ReturnType<typeof localPieces>>;
