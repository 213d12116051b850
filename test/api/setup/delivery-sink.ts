import { createServer, type Server } from "node:http";

export interface Delivery {
  body: string;
  headers: Record<string, string | string[] | undefined>;
  at: number;
}

/**
 * Stands where the encoder will be for the API suites: it accepts QStash deliveries and keeps
 * them so tests can see what was dispatched (GET /deliveries), leaving jobs `queued` for the
 * tests to drive through the internal API themselves.
 */
export async function startDeliverySink(): Promise<{ url: string; stop: () => Promise<void> }> {
  const deliveries: Delivery[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "GET" && req.url === "/deliveries") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(deliveries));
        return;
      }
      deliveries.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers, at: Date.now() });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
