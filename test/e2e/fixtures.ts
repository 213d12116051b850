import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ffmpeg, makeSource } from "../support/media";
import { madeOnce } from "../support/media-cache";

/**
 * Sources generated at test time and served over HTTP on 127.0.0.1, the way a customer's
 * public storage would serve them: byte ranges answered (as S3, R2 and every CDN do), but under
 * `/no-ranges/`, where every request gets the whole file, as a plain server would send it.
 * `bytesServed` counts what went out per path, ranges included. `served` is the folder served
 * (a new one, deleted at the stop, unless given).
 */
export async function startFixtureServer(served?: string) {
  const dir = served ?? (await mkdtemp(join(tmpdir(), "e2e-fixtures-")));
  const hits = new Map<string, number>();
  const sent = new Map<string, number>();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://fixtures");
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    const status = /^\/status\/(\d{3})\//.exec(url.pathname);
    if (status) {
      res.writeHead(Number(status[1])).end();
      return;
    }
    if (url.pathname === "/redirect") {
      res.writeHead(302, { location: url.searchParams.get("to") ?? "/" }).end();
      return;
    }
    const plain = url.pathname.startsWith("/no-ranges/");
    const name = url.pathname.replace(/^\/(no-ranges\/)?/, "").replace(/\.\./g, "");
    const file = join(dir, name);
    try {
      const { size } = await stat(file);
      const range = plain ? null : /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? "");
      const start = range ? (range[1] === "" ? Math.max(0, size - Number(range[2])) : Number(range[1])) : 0;
      const end = range && range[1] !== "" && range[2] !== "" ? Math.min(Number(range[2]), size - 1) : size - 1;
      if (range && start >= size) return res.writeHead(416, { "content-range": `bytes */${size}` }).end();
      res.writeHead(range ? 206 : 200, {
        "content-length": end - start + 1,
        ...(range && { "content-range": `bytes ${start}-${end}/${size}` }),
        ...(!plain && { "accept-ranges": "bytes" }),
      });
      const stream = createReadStream(file, { start, end });
      stream.on("data", (chunk) => sent.set(url.pathname, (sent.get(url.pathname) ?? 0) + chunk.length));
      stream.pipe(res);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    dir,
    /** Requests each path received, to count the encoder's attempts. */
    hits: (path: string) => hits.get(path) ?? 0,
    /** Bytes sent of each path, every request's together. */
    bytesServed: (path: string) => sent.get(path) ?? 0,
    url: (name: string) => `${base}/${name}`,
    base,
    async source(name: string, opts: Parameters<typeof makeSource>[1]) {
      await makeSource(join(dir, name), opts);
      return `${base}/${name}`;
    },
    async file(name: string, content: string | Buffer) {
      await writeFile(join(dir, name), content);
      return `${base}/${name}`;
    },
    async corrupt(name: string) {
      return this.file(name, randomBytes(64 * 1024));
    },
    /** A long, tiny source: cheap to make, long enough to pass a plan's duration limit. */
    async long(name: string, seconds: number) {
      const args = [
        "-f",
        "lavfi",
        "-i",
        `color=c=black:size=64x64:rate=1:duration=${seconds}`,
        "-f",
        "lavfi",
        "-i",
        `anullsrc=r=8000:cl=mono`,
        "-t",
        String(seconds),
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-c:a",
        "aac",
        "-b:a",
        "8k",
      ];
      await madeOnce(join(dir, name), { long: args }, (path) => ffmpeg([...args, path]));
      return `${base}/${name}`;
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      if (!served) await rm(dir, { recursive: true, force: true });
    },
  };
}

export type FixtureServer = Awaited<ReturnType<typeof startFixtureServer>>;
