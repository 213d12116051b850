import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";

/** While held, one byte a second goes out: the connection never falls silent, and a reader gains next to nothing. */
const TRICKLE_MS = 1000;

/**
 * A file served as an origin that takes byte ranges serves it, but holding every byte from
 * `heldFrom` on until `release()`. An encode that reads its source by ranges (docs/playback.md)
 * makes what the bytes before it hold, then waits, as long as the test needs it to, and goes on
 * at full speed once released.
 */
export async function heldOrigin(file: string, heldFrom: number) {
  const bytes = await readFile(file);
  let released: () => void = () => undefined;
  const release = new Promise<void>((resolve) => {
    released = resolve;
  });
  let open = false;
  void release.then(() => {
    open = true;
  });

  async function send(res: ServerResponse, start: number, end: number) {
    let at = start;
    const free = Math.min(end + 1, heldFrom);
    if (at < free) {
      res.write(bytes.subarray(at, free));
      at = free;
    }
    while (at <= end && !open && !res.destroyed) {
      res.write(bytes.subarray(at, at + 1));
      at += 1;
      await Promise.race([release, sleep(TRICKLE_MS)]);
    }
    res.end(bytes.subarray(at, end + 1));
  }

  const server = createServer((req, res) => {
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? "");
    const start = range ? Number(range[1]) : 0;
    const end = range && range[2] !== "" ? Math.min(Number(range[2]), bytes.length - 1) : bytes.length - 1;
    if (start > end) return res.writeHead(416, { "content-range": `bytes */${bytes.length}` }).end();
    res.writeHead(range ? 206 : 200, {
      "accept-ranges": "bytes",
      "content-type": "video/mp4",
      "content-length": end - start + 1,
      ...(range && { "content-range": `bytes ${start}-${end}/${bytes.length}` }),
    });
    if (req.method === "HEAD") return res.end();
    void send(res, start, end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/source.mp4`,
    release: () => released(),
    stop: () => {
      released();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Where in `file` the first packet of any stream at or after `seconds` begins: every byte before
 * it belongs to earlier media.
 */
export async function byteAt(file: string, seconds: number): Promise<number> {
  const { stdout } = await promisify(execFile)("ffprobe", [
    "-v",
    "error",
    "-show_entries",
    "packet=pts_time,pos",
    "-of",
    "json",
    file,
  ]);
  const packets = (JSON.parse(stdout) as { packets: { pts_time?: string; pos?: string }[] }).packets;
  const positions = packets.filter((p) => Number(p.pts_time) >= seconds).map((p) => Number(p.pos));
  if (positions.length === 0) throw new Error(`${file} has no packet at or after ${seconds} s`);
  return Math.min(...positions);
}
