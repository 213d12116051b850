import { createServer } from "node:http";
import { connect, isIP, type Socket } from "node:net";
import { WebSocketServer } from "ws";
import { close, listen } from "./listen";
import { FrontendSession } from "./pg-frontend";

/**
 * What Neon runs in front of Postgres, for a plain Postgres: each WebSocket carries the raw
 * wire protocol of one TCP connection to `?address=host:port`. The Neon driver reaches it with
 * `neonConfig.wsProxy`, `useSecureWebSocket = false` and `pipelineConnect = false`.
 * A development tool: it only connects to loopback targets.
 *
 * The database connection lives exactly as long as the client's session. The Neon driver's
 * `end()` sends Terminate and then waits for the server to hang up; it never closes its
 * WebSocket itself (pg passes its callback where the driver's socket expects an encoding).
 * PostgreSQL hangs up on Terminate, but a server that does not (PGlite's socket server did
 * not) would keep every connection a Worker request ever opened. So on Terminate the proxy
 * ends the connection itself, and the WebSocket closes with it.
 *
 * At most `maxConnections` database connections are open at once; a client beyond them waits
 * for one to come free (up to `queueTimeoutMs`), as at Neon's pooled endpoint.
 */
export async function startNeonWsProxy(
  host = "127.0.0.1",
  opts: { maxConnections?: number; queueTimeoutMs?: number } = {},
) {
  const slots = connectionSlots(opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
  const queueTimeoutMs = opts.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS;
  const server = createServer((_req, res) => res.writeHead(426).end("WebSocket only"));
  const wss = new WebSocketServer({ server });
  wss.on("connection", (ws, req) => {
    const address = new URL(req.url ?? "/", "http://proxy").searchParams.get("address") ?? "";
    const sep = address.lastIndexOf(":");
    const targetHost = address.slice(0, sep);
    const targetPort = Number(address.slice(sep + 1));
    const loopback = targetHost === "localhost" || (isIP(targetHost) && /^(127\.|::1$)/.test(targetHost));
    if (!loopback || !Number.isInteger(targetPort)) {
      ws.close(1008, "only loopback targets");
      return;
    }
    const session = new FrontendSession();
    // What the client sends before its turn comes is held, and written once connected.
    const early: Buffer[] = [];
    let socket: Socket | undefined;
    let gone = false;
    ws.on("message", (data: Buffer) => {
      if (session.ended) return;
      const ended = session.push(data);
      if (!socket) {
        early.push(data);
        if (ended) ws.close(); // done before it ever got a connection
        return;
      }
      socket.write(data);
      if (ended) hangUp(socket);
    });
    ws.on("close", () => {
      gone = true;
      socket?.destroy();
    });
    ws.on("error", () => {
      gone = true;
      socket?.destroy();
    });

    slots.acquire(queueTimeoutMs).then(
      (release) => {
        if (gone) return release();
        // Writes made while the socket is still connecting are queued by the socket itself.
        const upstream = connect(targetPort, targetHost);
        socket = upstream;
        for (const data of early.splice(0)) upstream.write(data);
        if (session.ended) hangUp(upstream);
        let answered = false;
        upstream.on("data", (chunk) => {
          answered = true;
          if (ws.readyState === ws.OPEN) ws.send(chunk);
        });
        upstream.on("close", () => {
          release();
          ws.close();
        });
        upstream.on("error", (err) => {
          // As Neon's proxy does, a database it cannot reach is told to the client in the protocol's
          // own words, so the client's error (and the log) says why rather than "terminated".
          if (!answered && ws.readyState === ws.OPEN)
            ws.send(errorResponse(CONNECTION_FAILURE, `cannot reach the database at ${address}: ${err.message}`));
          ws.close();
        });
      },
      () => {
        if (ws.readyState === ws.OPEN)
          ws.send(
            errorResponse(
              CONNECTION_FAILURE,
              `no database connection came free within ${queueTimeoutMs / 1000} s (query_wait_timeout)`,
            ),
          );
        ws.close();
      },
    );
  });
  const port = await listen(server, host);
  return {
    address: `${host}:${port}`,
    stop: async () => {
      for (const client of wss.clients) client.terminate();
      wss.close();
      await close(server);
    },
  };
}

/**
 * Database connections the proxy holds open at once. Neon's pooled endpoint (PgBouncer, which
 * the production DATABASE_URL names) has clients wait for a connection rather than refusing them
 * once the server's are taken; so does the proxy. Without the limit, 200 clients of `npm run dev`
 * would take every one of the embedded server's 200 connections and be refused "too many clients
 * already" (53300). The server keeps the rest for the Neon HTTP stand-in's pool and the admin CLI.
 */
const DEFAULT_MAX_CONNECTIONS = 100;
/** How long a client waits for a connection, as PgBouncer's query_wait_timeout (120 s). */
const DEFAULT_QUEUE_TIMEOUT_MS = 120_000;

/** `limit` slots; `acquire` waits for one (at most `timeoutMs`) and resolves with its release. */
function connectionSlots(limit: number) {
  let inUse = 0;
  const waiting: { grant: () => void }[] = [];
  const grant = (): (() => void) => {
    inUse += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      inUse -= 1;
      waiting.shift()?.grant();
    };
  };
  return {
    acquire(timeoutMs: number): Promise<() => void> {
      if (inUse < limit) return Promise.resolve(grant());
      return new Promise((resolve, reject) => {
        const waiter = {
          grant: () => {
            clearTimeout(timer);
            resolve(grant());
          },
        };
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(waiter), 1);
          reject(new Error("timed out"));
        }, timeoutMs);
        waiting.push(waiter);
      });
    },
  };
}

/** Ends the connection once the last bytes are out; a server that ignores the end is cut off. */
function hangUp(socket: Socket) {
  socket.end();
  setTimeout(() => socket.destroy(), HANG_UP_GRACE_MS).unref();
}

const HANG_UP_GRACE_MS = 1000;

/** SQLSTATE connection_failure. */
const CONNECTION_FAILURE = "08006";

/** A FATAL ErrorResponse message ('E'): severity, code and message fields, then the terminator. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`, "utf8");
  const header = Buffer.alloc(5);
  header.write("E", 0);
  header.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([header, fields]);
}
