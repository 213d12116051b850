import { createServer, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";

async function listen(server: Server, host: string): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as { port: number }).port;
}

function closer(server: Server, sockets: Set<Socket>) {
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}

/**
 * The internal service an SSRF would reach: a server on this machine's loopback, on every
 * address family (`::` takes IPv4 too), that answers like a media file and records every
 * request it receives. The campaign's assertion is that it receives none.
 */
export async function startCanary() {
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.writeHead(200, { "content-type": "video/mp4", "content-length": 4 }).end("leak");
  });
  const stop = closer(server, sockets);
  const port = await listen(server, "::");
  return { port, hits: () => [...hits], stop };
}

/**
 * Sources that never finish: `/body` sends its headers and then one byte per `everyMs`;
 * `/headers` sends even its status line and headers a byte at a time. Neither is ever silent
 * long enough for an idle timeout. Counts the requests, one per download attempt.
 */
export async function startTrickleServer(everyMs = 1000) {
  const requests = new Map<string, number>();
  const sockets = new Set<Socket>();
  const drip = (write: () => void, socket: Socket) => {
    const timer = setInterval(write, everyMs);
    socket.once("close", () => clearInterval(timer));
  };
  const server = createServer((req, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://trickle").pathname;
    requests.set(path, (requests.get(path) ?? 0) + 1);
    if (path.startsWith("/headers")) {
      const head = `HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nX-Padding: ${"a".repeat(100_000)}\r\n\r\n`;
      let at = 0;
      drip(() => req.socket.write(head[at++ % head.length]), req.socket);
      return;
    }
    res.writeHead(200, { "content-type": "video/mp4", "content-length": 50 * 1024 * 1024 });
    drip(() => res.write("\0"), req.socket);
  });
  const stop = closer(server, sockets);
  const port = await listen(server, "127.0.0.1");
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    requests: (path: string) => requests.get(path) ?? 0,
    stop,
  };
}

/**
 * Files far larger than the encoder takes, streamed without a Content-Length so that only a cap
 * applied while the bytes arrive can stop them: `/<name>?bytes=N&line=L` sends N bytes made of
 * `line` repeated (a caption file's one-character lines), or of NUL bytes. Records how many bytes
 * each path got out before its reader hung up.
 */
export async function startFloodServer() {
  const sent = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://flood");
    const total = Number(url.searchParams.get("bytes"));
    const line = url.searchParams.get("line");
    const chunk =
      line === null ? Buffer.alloc(64 * 1024) : Buffer.from(line.repeat(Math.ceil((64 * 1024) / line.length)));
    let out = 0;
    res.writeHead(200, { "content-type": "application/octet-stream" });
    const pump = () => {
      while (out < total) {
        const piece = chunk.subarray(0, Math.min(chunk.length, total - out));
        out += piece.length;
        sent.set(url.pathname, out);
        if (!res.write(piece)) return void res.once("drain", pump);
      }
      res.end();
    };
    res.on("error", () => undefined);
    pump();
  });
  const stop = closer(server, sockets);
  const port = await listen(server, "127.0.0.1");
  return {
    url: (name: string, bytes: number, line?: string) =>
      `http://127.0.0.1:${port}/${name}?bytes=${bytes}${line === undefined ? "" : `&line=${encodeURIComponent(line)}`}`,
    sent: (name: string) => sent.get(`/${name}`) ?? 0,
    stop,
  };
}
