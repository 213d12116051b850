import archiver from "archiver";
import { createReadStream, type ReadStream } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";

/**
 * A ZIP of `files` (paths relative to `dir`) as a stream, so it is uploaded while it is being
 * written. Media is already compressed: storing instead of deflating saves CPU for nothing lost.
 * Every failure reaches the reader as the stream's error, so an incomplete ZIP is never uploaded.
 *
 * Members are opened one at a time, in the order given (the playlist first, as the encoder lists
 * them), each once the one before is written. Whatever ends the stream early (a failed upload, a
 * cancel) closes the member being read: archiver's own `file()` left its read stream open, and
 * with it a descriptor on a file of a work dir about to be removed, for the life of the process.
 */
export function zipStream(dir: string, files: string[]): Readable {
  const archive = archiver("zip", { store: true });
  let reading: ReadStream | undefined;
  const fail = (err: Error) => {
    // Stops the queues first, so nothing is written into the destroyed stream afterwards.
    archive.abort();
    archive.destroy(err);
  };
  let next = 0;
  const appendNext = () => {
    if (next === files.length) {
      // finalize() rejects when the ZIP writer fails; unobserved, that rejection would end the process.
      archive.finalize().catch(fail);
      return;
    }
    const name = files[next++];
    reading = createReadStream(join(dir, name)).on("error", fail);
    archive.append(reading, { name });
  };
  archive.on("entry", appendNext);
  archive.on("warning", fail);
  archive.on("close", () => reading?.destroy());
  appendNext();
  return archive;
}
