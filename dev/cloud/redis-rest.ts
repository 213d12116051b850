import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import { createClient } from "redis";
import { close, guarded, listen } from "./listen";
import { createMemoryRedis } from "./memory-redis";
import { CONNECT_TIMEOUT_MS, Unreachable } from "./unreachable";

type Executor = (command: string[]) => Promise<unknown>;

/** Upstash answers bulk strings base64-encoded when asked; "OK" stays as it is (see the client's decode). */
function encode(value: unknown): unknown {
  if (typeof value === "string") return value === "OK" ? value : Buffer.from(value).toString("base64");
  if (Array.isArray(value)) return value.map(encode);
  return value;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

const asCommand = (value: unknown): string[] => {
  if (!Array.isArray(value) || value.length === 0) throw new Error("ERR a command is a non-empty JSON array");
  return value.map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
};

type Client = ReturnType<typeof createClient>;

/**
 * The start's connection, within CONNECT_TIMEOUT_MS: a server that accepts and never answers
 * would otherwise hold the start for ever.
 */
async function connectOnce(client: Client, url: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no answer")), CONNECT_TIMEOUT_MS);
  });
  try {
    await Promise.race([client.connect(), timeout]);
  } catch (err) {
    if (client.isOpen) client.destroy();
    throw new Unreachable("redis", url, err);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The Upstash Redis REST protocol (`POST /`, `/pipeline`, `/multi-exec`, `Upstash-Encoding:
 * base64`) in front of a real Redis when `redisUrl` is given, an in-memory subset otherwise.
 */
export async function startRedisRest(opts: { host: string; redisUrl?: string }) {
  const token = randomBytes(16).toString("hex");
  let exec: Executor;
  let disconnect = async (): Promise<void> => {};
  if (opts.redisUrl) {
    // Commands fail at once while Redis is away (answered {error}, as Upstash would), rather than
    // waiting in node-redis's offline queue; and its connection errors, re-emitted on the client,
    // are logged: with no listener they would end the process.
    // Once connected, it reconnects with a growing pause; a first connect that fails fails the
    // start instead of retrying for ever.
    let connected = false;
    const reconnectStrategy = (retries: number, cause: Error) =>
      connected ? Math.min(2 ** retries * 50, 2000) : cause;
    const client = createClient({ url: opts.redisUrl, disableOfflineQueue: true, socket: { reconnectStrategy } });
    client.once("ready", () => (connected = true));
    client.on("error", (err: Error) => console.error(`[Redis REST stand-in] Redis: ${err.message}`));
    await connectOnce(client, opts.redisUrl);
    exec = (command) => client.sendCommand(command);
    disconnect = async () => {
      // QUIT waits for a connection: one that is gone is dropped instead, its reconnecting stopped.
      if (client.isReady) await client.quit();
      else client.destroy();
    };
  } else {
    const memory = createMemoryRedis();
    exec = async (command) => memory(command);
  }
  const run = async (command: unknown) => {
    try {
      return { result: await exec(asCommand(command)) };
    } catch (err) {
      return { error: (err as Error).message };
    }
  };

  const server = createServer(
    guarded("Redis REST stand-in", async (req, res) => {
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      if (req.headers.authorization !== `Bearer ${token}`) return send(401, { error: "Unauthorized" });
      const base64 = String(req.headers["upstash-encoding"] ?? "").toLowerCase() === "base64";
      const shape = (r: { result?: unknown; error?: string }) =>
        r.error ? r : { result: base64 ? encode(r.result) : r.result };
      let body: unknown;
      try {
        body = await readJson(req);
      } catch {
        return send(400, { error: "ERR body is not JSON" });
      }
      const path = new URL(req.url ?? "/", "http://x").pathname;
      if (path === "/pipeline" || path === "/multi-exec") {
        if (!Array.isArray(body)) return send(400, { error: "ERR expected an array of commands" });
        const results = [];
        // Commands run one after another; a transaction here is sequential on one connection.
        for (const command of body) results.push(shape(await run(command)));
        return send(200, results);
      }
      const result = shape(await run(body));
      send(result.error ? 400 : 200, result);
    }),
  );
  const port = await listen(server, opts.host);
  return {
    url: `http://${opts.host}:${port}`,
    token,
    stop: async () => {
      await close(server);
      await disconnect();
    },
  };
}
