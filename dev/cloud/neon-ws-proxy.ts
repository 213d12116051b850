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
 */
export async function startNeonWsProxy(host = "127.0.0.1") {
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
    // Writes made while the socket is still connecting are queued by the socket itself.
    const socket = connect(targetPort, targetHost);
    const session = new FrontendSession();
    ws.on("message", (data: Buffer) => {
      if (session.ended) return;
      socket.write(data);
      if (session.push(data)) hangUp(socket);
    });
    let answered = false;
    socket.on("data", (chunk) => {
      answered = true;
      if (ws.readyState === ws.OPEN) ws.send(chunk);
    });
    socket.on("close", () => ws.close());
    socket.on("error", (err) => {
      // As Neon's proxy does, a database it cannot reach is told to the client in the protocol's
      // own words, so the client's error (and the log) says why rather than "terminated".
      if (!answered && ws.readyState === ws.OPEN) ws.send(errorResponse(CONNECTION_FAILURE, `cannot reach the database at ${address}: ${err.message}`));
      ws.close();
    });
    ws.on("close", () => socket.destroy());
    ws.on("error", () => socket.destroy());
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
