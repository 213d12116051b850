import type { IncomingMessage, Server, ServerResponse } from "node:http";

export async function listen(server: Server, host: string, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as { port: number }).port;
}

export function close(server: Server): Promise<void> {
  server.closeAllConnections?.();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * A stand-in's request handler that cannot take its process down: what it throws (a URL that
 * does not parse, a broken percent-escape) is logged and answered 400, or, once the answer has
 * begun, ends the connection. The stand-ins run inside `npm run dev` and the test runner, where
 * one odd request must not stop every service.
 */
export function guarded(name: string, handler: (req: IncomingMessage, res: ServerResponse) => unknown) {
  return (req: IncomingMessage, res: ServerResponse) => {
    Promise.resolve()
      .then(() => handler(req, res))
      .catch((err: unknown) => {
        console.error(
          `[${name}] ${req.method} ${req.url?.slice(0, 200)} failed: ${err instanceof Error ? err.message : String(err)}`,
        );
        if (res.headersSent) return res.destroy();
        res
          .writeHead(400, { "content-type": "application/json" })
          .end(JSON.stringify({ error: `the local ${name} could not handle this request` }));
      });
  };
}
