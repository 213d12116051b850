import { createServer, type IncomingHttpHeaders, request, type ServerResponse } from "node:http";
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
  /** Requests waiting for an encoder to free, every one at its hard limit. */
  waiting(): number;
  stop(): Promise<void>;
}

/**
 * The local stand-in for Fly.io's proxy in front of the encoder's Machines (docs/scaling.md):
 * one address, QStash's destination, whose requests go to the encoders on `ports` as Fly's
 * proxy sends them: to the least loaded (requests in flight), in turn among equals, and never to
 * one at its `hardLimit` (fly.toml's `hard_limit`, the encoders' CONCURRENCY); when all are at it,
 * a request waits for the first to free. So a part published while every encoder is busy goes to
 * whichever finishes first, not to one that would queue it behind a long task. An encoder that
 * refuses the connection (the supervisor is restarting it, as Fly restarts a Machine) is passed
 * over for the next; when none takes it the answer is 502, which QStash retries. Bodies stream
 * both ways, and a delivery's answer waits for its whole encode, so nothing here times out. The
 * connection is made before the request's body is read: a body is never sent twice.
 */
export async function startFlyProxy(opts: {
  ports: readonly number[];
  host?: string;
  port?: number;
  hardLimit?: number;
}): Promise<FlyProxy> {
  const host = opts.host ?? "127.0.0.1";
  const hardLimit = opts.hardLimit ?? Number.POSITIVE_INFINITY;
  const inFlight = opts.ports.map(() => 0);
  const waiting = new Set<() => void>();
  let next = 0;
  /** A request done: its encoder's load goes down, and the requests waiting for one try again, in order. */
  const release = (index: number) => {
    inFlight[index] -= 1;
    const woken = [...waiting];
    waiting.clear();
    for (const wake of woken) wake();
  };
  /** The encoders under their limit, the least loaded first, in turn among equals. */
  const candidates = () =>
    opts.ports
      .map((_, i) => (next + i) % opts.ports.length)
      .filter((i) => inFlight[i] < hardLimit)
      .sort((x, y) => inFlight[x] - inFlight[y]);
  /** Resolves true when an encoder frees, false when the client leaves first. */
  const freed = (res: ServerResponse) =>
    new Promise<boolean>((resolve) => {
      const wake = () => {
        res.off("close", leave);
        resolve(true);
      };
      const leave = () => {
        waiting.delete(wake);
        resolve(false);
      };
      waiting.add(wake);
      res.once("close", leave);
    });

  /**
   * A connection to the encoder the request goes to, counted in its load; null when none under its
   * limit answers or the client left. Encoders that filled up while others were tried are waited
   * for, as when all were full.
   */
  async function route(res: ServerResponse): Promise<{ index: number; socket: Socket } | null> {
    for (;;) {
      const order = candidates();
      if (order.length === 0 && !(await freed(res))) return null;
      let refused = false;
      for (const index of order) {
        if (inFlight[index] >= hardLimit) continue;
        inFlight[index] += 1;
        const socket = await connectTo(host, opts.ports[index]);
        if (socket) {
          next = (index + 1) % opts.ports.length;
          return { index, socket };
        }
        release(index);
        refused = true;
      }
      if (refused) return null;
    }
  }

  const server = createServer(async (req, res) => {
    const routed = await route(res);
    if (routed && res.destroyed) {
      routed.socket.destroy();
      release(routed.index);
      return;
    }
    if (!routed) {
      if (!res.destroyed) res.writeHead(502, { "content-type": "text/plain" }).end("no encoder answered\n");
      return;
    }
    const { index, socket } = routed;
    res.once("close", () => release(index));
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
  return { url: `http://${host}:${port}`, waiting: () => waiting.size, stop: () => close(server) };
}
