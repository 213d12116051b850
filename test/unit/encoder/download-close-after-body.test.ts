import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadSource } from "../../../encoder/source/download";

/**
 * An origin that answers with the whole body in one write and closes the connection at once
 * (Content-Length and Connection: close, as Python's http.server or any HTTP/1.0 server does),
 * to a consumer slow enough that the download is paused for backpressure when the FIN arrives.
 * undici 6 and 7 assert `!this.paused` in that moment from a socket event handler (their bug):
 * no try/catch sees it and the whole encoder dies.
 */
const BODY = randomBytes(6 * 1024 * 1024);
let server: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "close-after-body-"));
  server = createServer((socket) => {
    socket.on("error", () => undefined);
    socket.once("data", () => {
      const head = `HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nContent-Length: ${BODY.length}\r\nConnection: close\r\n\r\n`;
      socket.end(Buffer.concat([Buffer.from(head), BODY]));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

/** Reads a named pipe slowly: each 64 KiB waits a few milliseconds, so the writer is held back. */
async function slowRead(path: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 })) {
    chunks.push(chunk as Buffer);
    await new Promise((r) => setTimeout(r, 3));
  }
  return Buffer.concat(chunks);
}

const sha256 = (data: Buffer) => createHash("sha256").update(data).digest("hex");

describe("a source that closes the connection right after the body", () => {
  it("downloads completely to a slow consumer, and nothing is thrown outside the download", async () => {
    for (let round = 0; round < 3; round++) {
      // The destination is a FIFO this test drains slowly: real backpressure on the download.
      const dest = join(dir, `slow-${round}`);
      await promisify(execFile)("mkfifo", [dest]);
      const [result, received] = await Promise.all([
        downloadSource(`${base}/source.mp4`, dest, {
          allowLoopback: true,
          maxBytes: 64 * 1024 * 1024,
          timeoutMs: 60_000,
        }),
        slowRead(dest),
      ]);
      expect(result.bytes).toBe(BODY.length);
      expect(received.length).toBe(BODY.length);
      expect(sha256(received)).toBe(sha256(BODY));
    }
  });

  it("downloads completely to a file on disk, many times over", async () => {
    for (let round = 0; round < 5; round++) {
      const dest = join(dir, `disk-${round}`);
      const result = await downloadSource(`${base}/source.mp4`, dest, {
        allowLoopback: true,
        maxBytes: 64 * 1024 * 1024,
        timeoutMs: 60_000,
      });
      expect(result.bytes).toBe(BODY.length);
      const onDisk = await slowRead(dest);
      expect(sha256(onDisk)).toBe(sha256(BODY));
    }
  });
});
