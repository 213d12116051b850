import { constants, openAsBlob } from "node:fs";
import { access, open, readFile, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { NetworkError } from "../client";
import { CliFailure, EXIT } from "./exit-codes";

const cannotWrite = (path: string, err: unknown) =>
  new CliFailure(EXIT.usage, `cannot write ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);

/**
 * Before a job is created for `--out`: a directory that does not exist or cannot be written, or a
 * destination that is itself a directory, would waste the wait and the unit.
 */
export async function assertWritableDestination(path: string): Promise<void> {
  if ((await stat(path).catch(() => undefined))?.isDirectory()) throw cannotWrite(path, { code: "EISDIR" });
  await access(dirname(path), constants.W_OK).catch((err) => {
    throw cannotWrite(path, err);
  });
}

export async function readJsonFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new CliFailure(EXIT.usage, `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new CliFailure(EXIT.usage, `${path} is not valid JSON`);
  }
}

export function parseJsonOption(name: string, value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new CliFailure(EXIT.usage, `--${name} must be JSON, such as '{"orderId":42}'`);
  }
}

/**
 * Streams a download to `path`; returns the bytes written. It is written beside `path` under a
 * temporary name and renamed over it once whole, so `path` is never a partial file: a file that
 * was there stays as it was if the download fails or `signal` aborts (Ctrl-C), and the temporary
 * file is removed. The file failing is a usage error, the connection a network one.
 */
export async function saveResponse(response: Response, path: string, signal?: AbortSignal): Promise<number> {
  if (!response.body) throw new CliFailure(EXIT.unexpected, "the download had no body");
  const partial = join(dirname(path), `.${basename(path)}.${process.pid}.part`);
  const handle = await open(partial, "wx").catch((err) => {
    throw cannotWrite(path, err);
  });
  const file = handle.createWriteStream();
  try {
    await pipeline(Readable.fromWeb(response.body as WebReadableStream), file, { signal });
    await rename(partial, path).catch((err) => {
      throw cannotWrite(path, err);
    });
  } catch (err) {
    await rm(partial, { force: true });
    if (signal?.aborted) throw signal.reason;
    if (err instanceof CliFailure) throw err;
    throw (err as NodeJS.ErrnoException).syscall === "write" ? cannotWrite(path, err) : new NetworkError(err);
  }
  return file.bytesWritten;
}

/** A local file to upload, read a part at a time as it is sent (a file-backed Blob), and its name. */
export async function openUploadSource(path: string): Promise<{ blob: Blob; filename: string }> {
  const info = await stat(path).catch((err: NodeJS.ErrnoException) => {
    throw new CliFailure(EXIT.usage, `cannot read ${path}: ${err.code ?? String(err)}`);
  });
  if (!info.isFile()) throw new CliFailure(EXIT.usage, `cannot upload ${path}: not a file`);
  if (info.size === 0) throw new CliFailure(EXIT.usage, `cannot upload ${path}: the file is empty`);
  return { blob: await openAsBlob(path), filename: basename(path) };
}
