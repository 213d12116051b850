import { createServer } from "node:net";

/**
 * Ports a stack's servers take, below Linux's ephemeral range (32768–60999): a port the system
 * hands out as free there can be taken by any outgoing connection before the server that is to
 * listen on it has started (workerd starts slowly on a loaded host).
 */
const FIRST = 20_000;
const LAST = 32_000;

function listenable(port: number, host: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", (err: NodeJS.ErrnoException) =>
      err.code === "EADDRINUSE" || err.code === "EACCES" ? resolve(false) : reject(err),
    );
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** A port no server holds now, picked at random from a range outgoing connections do not use. */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST));
    if (await listenable(port, host)) return port;
  }
  throw new Error(`no free port between ${FIRST} and ${LAST} on ${host}`);
}

/** Whether another server already listens on host:port: binding it fails with EADDRINUSE. */
export async function portInUse(port: number, host = "127.0.0.1"): Promise<boolean> {
  return !(await listenable(port, host));
}
