import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { CliFailure, EXIT } from "./exit-codes";

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

/** Streams a download to `path`; returns the bytes written. */
export async function saveResponse(response: Response, path: string): Promise<number> {
  if (!response.body) throw new CliFailure(EXIT.unexpected, "the download had no body");
  const file = createWriteStream(path);
  await pipeline(Readable.fromWeb(response.body as WebReadableStream), file);
  return file.bytesWritten;
}
