import { constants } from "node:fs";
import { access, open, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { NetworkError } from "../client";
import { CliFailure, EXIT } from "./exit-codes";

const cannotWrite = (path: string, err: unknown) => new CliFailure(EXIT.usage, `cannot write ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);

/** Before a job is created for `--out`: a directory that does not exist or cannot be written would waste the wait and the unit. */
export async function assertWritableDestination(path: string): Promise<void> {
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

/** Streams a download to `path`; returns the bytes written. The file failing is a usage error, the connection a network one. */
export async function saveResponse(response: Response, path: string): Promise<number> {
  if (!response.body) throw new CliFailure(EXIT.unexpected, "the download had no body");
  const handle = await open(path, "w").catch((err) => {
    throw cannotWrite(path, err);
  });
  const file = handle.createWriteStream();
  try {
    await pipeline(Readable.fromWeb(response.body as WebReadableStream), file);
  } catch (err) {
    throw (err as NodeJS.ErrnoException).syscall === "write" ? cannotWrite(path, err) : new NetworkError(err);
  }
  return file.bytesWritten;
}
