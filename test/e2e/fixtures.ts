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
 * public storage would serve them.
 */
export async function startFixtureServer() {
  const dir = await mkdtemp(join(tmpdir(), "e2e-fixtures-"));
  const hits = new Map<string, number>();
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
    const file = join(dir, url.pathname.replace(/^\/+/, "").replace(/\.\./g, ""));
    try {
      const info = await stat(file);
      res.writeHead(200, { "content-length": info.size });
      createReadStream(file).pipe(res);
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
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type FixtureServer = Awaited<ReturnType<typeof startFixtureServer>>;
