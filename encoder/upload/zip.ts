import archiver from "archiver";
import { join } from "node:path";
import type { Readable } from "node:stream";

/**
 * A ZIP of `files` (paths relative to `dir`) as a stream, so it is uploaded while it is being
 * written. Media is already compressed: storing instead of deflating saves CPU for nothing lost.
 * Every failure reaches the reader as the stream's error, so an incomplete ZIP is never uploaded.
 */
export function zipStream(dir: string, files: string[]): Readable {
  // One stat at a time: archiver adds members in the order their stats finish (node-archiver#397),
  // and the playlist should come first, in the order the encoder listed the files.
  const archive = archiver("zip", { store: true, statConcurrency: 1 });
  const fail = (err: Error) => {
    // Stops the queues first, so nothing is written into the destroyed stream afterwards.
    archive.abort();
    archive.destroy(err);
  };
  // archiver leaves out a member it cannot stat (or cannot store) with only a warning.
  archive.on("warning", fail);
  for (const name of files) archive.file(join(dir, name), { name });
  // finalize() rejects when the ZIP writer fails; unobserved, that rejection would end the process.
  archive.finalize().catch(fail);
  return archive;
}
