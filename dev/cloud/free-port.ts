import { mkdir, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

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

/** Ports handed out lately, one file each, shared by every process on the machine. */
const CLAIMS_DIR = join(tmpdir(), "vep-free-ports");
/** How long a port handed out stays another caller's: past a loaded host's start of workerd. */
const CLAIM_MS = 120_000;

/**
 * Claims the port for this caller, unless another process (or stack) had it handed out within
 * CLAIM_MS: two stacks starting at once (the suites run several) could otherwise both find a
 * port free and both be given it, and the second server to start would find it taken.
 */
async function claim(port: number): Promise<boolean> {
  await mkdir(CLAIMS_DIR, { recursive: true });
  const path = join(CLAIMS_DIR, String(port));
  try {
    await writeFile(path, String(process.pid), { flag: "wx" });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const claimed = await stat(path).catch(() => null);
  if (claimed && Date.now() - claimed.mtimeMs < CLAIM_MS) return false;
  await writeFile(path, String(process.pid));
  return true;
}

/**
 * A port no server holds now and no other caller was given in the last CLAIM_MS, picked at random
 * from a range outgoing connections do not use.
 */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST));
    if ((await listenable(port, host)) && (await claim(port))) return port;
  }
  throw new Error(`no free port between ${FIRST} and ${LAST} on ${host}`);
}

/** Whether another server already listens on host:port: binding it fails with EADDRINUSE. */
export async function portInUse(port: number, host = "127.0.0.1"): Promise<boolean> {
  return !(await listenable(port, host));
}
