import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import { SignJWT } from "jose";
import { close, listen } from "./listen";

type State = "waiting" | "delivering" | "delivered" | "failed" | "cancelled";

interface Message {
  messageId: string;
  url: string;
  method: string;
  body: Buffer;
  /** Headers for the destination: the Upstash-Forward-* ones, unprefixed, and Content-Type. */
  headers: Record<string, string>;
  maxRetries: number;
  retried: number;
  flowControlKey?: string;
  parallelism?: number;
  notBefore: number;
  createdAt: number;
  state: State;
  lastStatus?: number;
}

export interface QStashEmulatorOptions {
  host: string;
  /** First retry delay; each later one doubles, up to maxRetryDelayMs. */
  retryBaseMs?: number;
  maxRetryDelayMs?: number;
}

function parseDuration(value: string | undefined): number {
  if (!value) return 0;
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!m) return 0;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? "s"] ?? 1000;
  return Number(m[1]) * unit;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks);
}

/**
 * QStash's publish API on this machine: the real `@upstash/qstash` Client publishes to it and
 * cancels through it; deliveries carry an `Upstash-Signature` the real `Receiver` verifies,
 * `Upstash-Retried`, retries with backoff, and flow-control parallelism per key. A publish with
 * an `Upstash-Deduplication-Id` already seen is accepted but not enqueued: 202 with the first
 * message's id, as QStash answers (which keeps the ids for far longer than this process lives).
 */
export async function startQStashEmulator(opts: QStashEmulatorOptions) {
  const token = `qstash_${randomBytes(16).toString("hex")}`;
  const currentSigningKey = `sig_${randomBytes(16).toString("hex")}`;
  const nextSigningKey = `sig_${randomBytes(16).toString("hex")}`;
  const retryBaseMs = opts.retryBaseMs ?? 1000;
  const maxRetryDelayMs = opts.maxRetryDelayMs ?? 30_000;
  const messages = new Map<string, Message>();
  // Every message stays in `messages` (to be read or cancelled by id); the queue's work only
  // looks at the ones waiting and the ones being delivered, so it does not grow with history.
  const waiting = new Set<Message>();
  const delivering = new Set<Message>();
  /** Deduplication id → the message first published under it. */
  const deduplicated = new Map<string, string>();
  const inFlight = new Map<string, AbortController>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function sign(message: Message): Promise<string> {
    const bodyHash = createHash("sha256").update(message.body).digest("base64url");
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ body: bodyHash })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer("Upstash")
      .setSubject(message.url)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + 300)
      .setJti(`jwt_${randomUUID()}`)
      .sign(new TextEncoder().encode(currentSigningKey));
  }

  const activeFor = (key: string) =>
    [...delivering].filter((m) => m.state === "delivering" && m.flowControlKey === key).length;

  async function deliver(message: Message) {
    waiting.delete(message);
    delivering.add(message);
    message.state = "delivering";
    const abort = new AbortController();
    inFlight.set(message.messageId, abort);
    let status = 0;
    let nonRetryable = false;
    try {
      const res = await fetch(message.url, {
        method: message.method,
        headers: {
          ...message.headers,
          "Upstash-Message-Id": message.messageId,
          "Upstash-Retried": String(message.retried),
          "Upstash-Signature": await sign(message),
        },
        body: message.method === "GET" || message.method === "HEAD" ? undefined : new Uint8Array(message.body),
        signal: abort.signal,
      });
      status = res.status;
      nonRetryable = res.headers.get("upstash-nonretryable-error") === "true";
      await res.arrayBuffer().catch(() => undefined);
    } catch {
      status = 0;
    } finally {
      inFlight.delete(message.messageId);
      delivering.delete(message);
    }
    message.lastStatus = status;
    if ((message.state as State) === "cancelled" || stopped) return;
    if (status >= 200 && status < 300) message.state = "delivered";
    else if ((status === 489 && nonRetryable) || message.retried >= message.maxRetries) message.state = "failed";
    else {
      message.retried += 1;
      message.notBefore = Date.now() + Math.min(retryBaseMs * 2 ** (message.retried - 1), maxRetryDelayMs);
      message.state = "waiting";
      waiting.add(message);
    }
    schedule();
  }

  /** FIFO by creation, respecting delays and each flow-control key's parallelism. */
  function pump() {
    timer = undefined;
    if (stopped) return;
    const now = Date.now();
    let nextWake = Infinity;
    for (const m of [...waiting].sort((a, b) => a.createdAt - b.createdAt)) {
      if (m.notBefore > now) {
        nextWake = Math.min(nextWake, m.notBefore);
        continue;
      }
      if (m.flowControlKey && m.parallelism && activeFor(m.flowControlKey) >= m.parallelism) continue;
      void deliver(m);
    }
    if (nextWake < Infinity) timer = setTimeout(pump, Math.max(5, nextWake - now));
  }
  function schedule() {
    if (timer) clearTimeout(timer);
    timer = setTimeout(pump, 0);
  }

  const server = createServer(async (req, res) => {
    const send = (status: number, body?: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(body === undefined ? "" : JSON.stringify(body));
    if (req.headers.authorization !== `Bearer ${token}`) return send(401, { error: "Unauthorized" });
    const url = req.url ?? "/";

    if (req.method === "POST" && url.startsWith("/v2/publish/")) {
      const destination = decodeURIComponent(url.slice("/v2/publish/".length));
      if (!/^https?:\/\//.test(destination)) return send(400, { error: `invalid destination url: ${destination}` });
      const deduplicationId = req.headers["upstash-deduplication-id"];
      const first = typeof deduplicationId === "string" ? deduplicated.get(deduplicationId) : undefined;
      if (first) {
        req.resume();
        return send(202, { messageId: first, url: destination, deduplicated: true });
      }
      const messageId = `msg_${randomUUID()}`;
      // Taken before the body is read, so a concurrent publish under the same id is a duplicate too.
      if (typeof deduplicationId === "string") deduplicated.set(deduplicationId, messageId);
      const headers: Record<string, string> = {};
      const contentType = req.headers["content-type"];
      if (contentType) headers["Content-Type"] = String(contentType);
      for (const [name, value] of Object.entries(req.headers)) {
        if (name.startsWith("upstash-forward-") && typeof value === "string") headers[name.slice("upstash-forward-".length)] = value;
      }
      const flowValue = String(req.headers["upstash-flow-control-value"] ?? "");
      const parallelism = Number(/parallelism=(\d+)/.exec(flowValue)?.[1] ?? NaN);
      const now = Date.now();
      const message: Message = {
        messageId,
        url: destination,
        method: String(req.headers["upstash-method"] ?? "POST"),
        body: await readBody(req),
        headers,
        maxRetries: req.headers["upstash-retries"] !== undefined ? Number(req.headers["upstash-retries"]) : 3,
        retried: 0,
        flowControlKey: req.headers["upstash-flow-control-key"] as string | undefined,
        parallelism: Number.isFinite(parallelism) ? parallelism : undefined,
        notBefore: now + parseDuration(req.headers["upstash-delay"] as string | undefined),
        createdAt: now,
        state: "waiting",
      };
      messages.set(message.messageId, message);
      waiting.add(message);
      schedule();
      return send(201, { messageId: message.messageId, url: destination });
    }

    const match = /^\/v2\/messages\/([^/?]+)/.exec(url);
    if (match) {
      const message = messages.get(decodeURIComponent(match[1]));
      if (!message) return send(404, { error: "message not found" });
      if (req.method === "GET") {
        const { body, headers, ...info } = message;
        return send(200, { ...info, body: body.toString("utf8"), header: headers });
      }
      if (req.method === "DELETE") {
        // Only a message not yet settled can be cancelled; one being delivered will not be retried.
        const cancellable = message.state === "waiting" || message.state === "delivering";
        if (cancellable) message.state = "cancelled";
        waiting.delete(message);
        return send(200, { cancelled: cancellable ? 1 : 0 });
      }
    }
    send(404, { error: "not found" });
  });

  const port = await listen(server, opts.host);
  return {
    url: `http://${opts.host}:${port}`,
    token,
    currentSigningKey,
    nextSigningKey,
    /** For tests: what the emulator holds, without the bodies. */
    messages: () => [...messages.values()].map(({ body: _b, ...m }) => m),
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      for (const abort of inFlight.values()) abort.abort();
      await close(server);
    },
  };
}
