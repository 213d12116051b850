import { createServer, type IncomingHttpHeaders, request } from "node:http";
import { connect, type Socket } from "node:net";
import { close, listen } from "./listen";

/** Headers about one connection, not the request: never passed on (RFC 9110, 7.6.1). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

/** A connection to `port`, or null when nothing listens there (an encoder restarting). */
function connectTo(host: string, port: number): Promise<Socket | null> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once("connect", () => {
      socket.removeAllListeners("error");
      resolve(socket);
    });
    socket.once("error", () => resolve(null));
  });
}

export interface FlyProxy {
  url: string;
  stop(): Promise<void>;
}

/**
 * The local stand-in for Fly.io's proxy in front of the encoder's Machines (docs/scaling.md):
 * one address, QStash's destination, whose requests go round robin over the encoders on
 * `ports`. An encoder that refuses the connection (the supervisor is restarting it, as Fly
 * restarts a Machine) is passed over for the next; when none takes it the answer is 502, which
 * QStash retries. Bodies stream both ways, and a delivery's answer waits for its whole encode,
 * so nothing here times out. The connection is made before the request's body is read: a body
 * is never sent twice.
 */
export async function startFlyProxy(opts: {
  ports: readonly number[];
  host?: string;
  port?: number;
}): Promise<FlyProxy> {
  const host = opts.host ?? "127.0.0.1";
  let next = 0;
  const server = createServer(async (req, res) => {
    let socket: Socket | null = null;
    for (let tried = 0; tried < opts.ports.length && !socket; tried++) {
      const port = opts.ports[next];
      next = (next + 1) % opts.ports.length;
      socket = await connectTo(host, port);
    }
    if (!socket) {
      res.writeHead(502, { "content-type": "text/plain" }).end("no encoder answered\n");
      return;
    }
    const connection = socket;
    const upstream = request({
      method: req.method,
      path: req.url,
      headers: endToEnd(req.headers),
      createConnection: () => connection,
    });
    upstream.on("response", (answer) => {
      res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      answer.pipe(res);
      answer.on("error", () => res.destroy());
    });
    // The encoder gone mid-answer (killed): the client sees the connection cut, as it would behind Fly.
    upstream.on("error", () => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { "content-type": "text/plain" }).end("the encoder closed the connection\n");
    });
    // The client gone (QStash gave up on the delivery): so is the encoder's request.
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  server.requestTimeout = 0;
  const port = await listen(server, host, opts.port);
  return { url: `http://${host}:${port}`, stop: () => close(server) };
}
