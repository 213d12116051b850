import { createServer, type Server } from "node:http";

export interface Delivery {
  body: string;
  headers: Record<string, string | string[] | undefined>;
  at: number;
}

/**
 * Stands where the encoder will be for the API suites: it accepts QStash deliveries and keeps
 * them so tests can see what was dispatched (GET /deliveries), leaving jobs `queued` for the
 * tests to drive through the internal API themselves. `POST /hold` makes it keep deliveries
 * open, as a busy encoder does, so further messages wait in the queue; `POST /release` answers
 * them all.
 */
export async function startDeliverySink(): Promise<{ url: string; stop: () => Promise<void> }> {
  const deliveries: Delivery[] = [];
  let holding = false;
  const held: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "GET" && req.url === "/deliveries") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(deliveries));
        return;
      }
      if (req.method === "POST" && (req.url === "/hold" || req.url === "/release")) {
        holding = req.url === "/hold";
        if (!holding) for (const answer of held.splice(0)) answer();
        res.writeHead(204).end();
        return;
      }
      deliveries.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers, at: Date.now() });
      const answer = () => res.writeHead(200).end("ok");
      if (holding) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        for (const answer of held.splice(0)) answer();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
