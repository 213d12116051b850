import { createServer } from "node:http";

export interface ReceivedHook {
  headers: Record<string, string>;
  body: string;
}

/** An HTTP endpoint on this machine that keeps every webhook delivered to it. */
export async function startWebhookReceiver() {
  const received: ReceivedHook[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`,
    received,
    /** The first delivery whose payload is about `jobId`. */
    async waitFor(jobId: string, timeoutMs = 20_000): Promise<ReceivedHook> {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const hit = received.find((h) => JSON.parse(h.body).jobId === jobId);
        if (hit) return hit;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no webhook for ${jobId}`);
    },
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}
