import { createServer } from "node:http";
import { connect, isIP } from "node:net";
import { WebSocketServer } from "ws";
import { close, listen } from "./listen";

/**
 * What Neon runs in front of Postgres, for a plain Postgres: each WebSocket carries the raw
 * wire protocol of one TCP connection to `?address=host:port`. The Neon driver reaches it with
 * `neonConfig.wsProxy`, `useSecureWebSocket = false` and `pipelineConnect = false`.
 * A development tool: it only connects to loopback targets.
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
    const socket = connect(targetPort, targetHost);
    const pending: Buffer[] = [];
    socket.on("connect", () => pending.splice(0).forEach((chunk) => socket.write(chunk)));
    ws.on("message", (data: Buffer) => (socket.connecting ? pending.push(data) : socket.write(data)));
    socket.on("data", (chunk) => ws.readyState === ws.OPEN && ws.send(chunk));
    socket.on("close", () => ws.close());
    socket.on("error", () => ws.close());
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
