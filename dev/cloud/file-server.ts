import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createServer } from "node:http";
import { basename, extname } from "node:path";
import { close, guarded, listen } from "./listen";

const CONTENT_TYPES: Record<string, string> = {
  ".mp4": "video/mp4",
  ".png": "image/png",
  ".jpg": "image/jpeg",
};

/**
 * Serves the given files, each at `/<its file name>`, the way a customer's public storage would
 * serve sources; nothing else is reachable. Loopback only: a development tool.
 */
export async function startFileServer(opts: { files: string[]; host?: string }) {
  const host = opts.host ?? "127.0.0.1";
  const byName = new Map(opts.files.map((path) => [`/${basename(path)}`, path]));
  const server = createServer(
    guarded("file server", async (req, res) => {
      const path = byName.get(new URL(req.url ?? "/", "http://files").pathname);
      if (!path || (req.method !== "GET" && req.method !== "HEAD")) {
        res.writeHead(path ? 405 : 404).end();
        return;
      }
      try {
        const { size } = await stat(path);
        res.writeHead(200, {
          "content-length": size,
          "content-type": CONTENT_TYPES[extname(path)] ?? "application/octet-stream",
        });
        if (req.method === "HEAD") res.end();
        else
          createReadStream(path)
            .on("error", () => res.destroy())
            .pipe(res);
      } catch {
        res.writeHead(404).end();
      }
    }),
  );
  const port = await listen(server, host);
  const base = `http://${host}:${port}`;
  return {
    url: (path: string) => `${base}/${basename(path)}`,
    stop: () => close(server),
  };
}
