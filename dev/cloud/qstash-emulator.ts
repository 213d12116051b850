import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import { SignJWT } from "jose";
import { parseRetryDelay, type RetryDelay } from "../../domain/retry-delay";
import { httpRequest, readBody as readAnswer } from "../../encoder/http/client";
import { close, guarded, listen } from "./listen";

type State = "waiting" | "delivering" | "delivered" | "failed" | "cancelled";

/** Where QStash reports a message it gave up on, and how that report is itself delivered. */
interface FailureCallback {
  url: string;
  method: string;
  headers: Record<string, string>;
  maxRetries: number;
  delayMs: number;
}

/** The destination's last answer, as the failure callback reports it. */
interface LastAnswer {
  status: number;
  headers: Record<string, string[]>;
  body: Buffer;
}

interface Message {
  messageId: string;
  url: string;
  method: string;
  body: Buffer;
  /** Headers for the destination: the Upstash-Forward-* ones, unprefixed, and Content-Type. */
  headers: Record<string, string>;
  maxRetries: number;
  retried: number;
  /** `Upstash-Retry-Delay`: the milliseconds before each retry, over `retried`; the emulator's back-off when absent. */
  retryDelay?: string;
  /** The same, parsed once at the publish. */
  delayOf?: RetryDelay;
  flowControlKey?: string;
  parallelism?: number;
  notBefore: number;
  createdAt: number;
  state: State;
  lastStatus?: number;
  failureCallback?: FailureCallback;
}

/** A message as GET /v2/messages/{id} (and the emulator's own path) describes it: its body as text, its failure callback's URL. */
export type EmulatedMessage = Omit<Message, "body" | "headers" | "failureCallback" | "delayOf"> & {
  body: string;
  header: Record<string, string>;
  failureCallback?: string;
};

/** The description of a message, as the GET paths answer it. */
function described({ body, headers, failureCallback, delayOf: _parsed, ...info }: Message): EmulatedMessage {
  return { ...info, body: body.toString("utf8"), header: headers, failureCallback: failureCallback?.url };
}

/** Any message the emulator ever held, settled ones too (QStash's own API forgets those). */
export async function readEmulatedMessage(
  qstash: { url: string; token: string },
  messageId: string,
): Promise<EmulatedMessage> {
  const res = await fetch(`${qstash.url}/emulator/messages/${encodeURIComponent(messageId)}`, {
    headers: { Authorization: `Bearer ${qstash.token}` },
  });
  if (!res.ok) throw new Error(`the QStash emulator has no message ${messageId} (${res.status})`);
  return (await res.json()) as EmulatedMessage;
}

export interface QStashEmulatorOptions {
  host: string;
  /** First retry delay of a message published without `Upstash-Retry-Delay`; each later one doubles, up to maxRetryDelayMs. */
  retryBaseMs?: number;
  maxRetryDelayMs?: number;
  /** How long a deduplication id stands: QStash's window is 10 minutes. */
  deduplicationWindowMs?: number;
  /**
   * How long a delivery may wait for its answer before it counts as failed and is retried, the
   * destination's work notwithstanding: QStash's Max HTTP Response Duration, 15 minutes on its
   * free plan (2 hours on pay-as-you-go).
   */
  responseTimeoutMs?: number;
}

const RESPONSE_TIMEOUT_MS = 15 * 60_000;

const DEDUPLICATION_WINDOW_MS = 10 * 60_000;

/** The most of a destination's answer kept for a failure callback; more is not read. */
const MAX_ANSWER_BYTES = 1024 * 1024;

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

/** `Upstash-Retries` and its callback variants; QStash's default where none is given. */
function retriesOf(value: string | string[] | undefined): number {
  if (value === undefined) return 3;
  const retries = Number(value);
  if (!Number.isInteger(retries) || retries < 0) throw new RangeError(`invalid retries: ${String(value)}`);
  return retries;
}

/** `Upstash-Retry-Delay`, as sent and parsed, when it is an expression QStash would take; none when absent. */
function retryDelayOf(value: string | string[] | undefined): Pick<Message, "retryDelay" | "delayOf"> {
  if (value === undefined) return {};
  try {
    return { retryDelay: String(value), delayOf: parseRetryDelay(String(value)) };
  } catch (err) {
    throw new RangeError(`invalid retry delay: ${(err as Error).message}`);
  }
}

/** The request's headers named `prefix…`, with the prefix taken off. */
function forwardedHeaders(req: IncomingMessage, prefix: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith(prefix) && typeof value === "string") headers[name.slice(prefix.length)] = value;
  }
  return headers;
}

/** `Upstash-Failure-Callback` and the `Upstash-Failure-Callback-*` headers that configure its delivery. */
function failureCallbackOf(req: IncomingMessage): FailureCallback | undefined {
  const url = req.headers["upstash-failure-callback"];
  if (typeof url !== "string") return undefined;
  return {
    url,
    method: String(req.headers["upstash-failure-callback-method"] ?? "POST"),
    headers: forwardedHeaders(req, "upstash-failure-callback-forward-"),
    maxRetries: retriesOf(req.headers["upstash-failure-callback-retries"]),
    delayMs: parseDuration(req.headers["upstash-failure-callback-delay"] as string | undefined),
  };
}

/**
 * QStash's publish API on this machine: the real `@upstash/qstash` Client publishes to it and
 * cancels through it; deliveries carry an `Upstash-Signature` the real `Receiver` verifies,
 * `Upstash-Retried`, retries with backoff (the message's `Upstash-Retry-Delay` expression when
 * it has one), and flow-control parallelism per key. A message given up on (retries spent, or a
 * 489 with `Upstash-NonRetryable-Error`) that was published with an `Upstash-Failure-Callback`
 * is reported there, as QStash does. A publish with
 * an `Upstash-Deduplication-Id` already seen is accepted but not enqueued: 202 with the first
 * message's id, as QStash answers, for 10 minutes (QStash's deduplication window).
 * A destination's redirect is not followed: like any answer outside 2xx, it is retried; so is a
 * delivery still unanswered after the response timeout (15 minutes, QStash's on its free plan).
 * `GET /v2/messages/{id}` answers only for a message still waiting or being delivered, as
 * QStash's does; `GET /emulator/messages/{id}` (not QStash's) shows any message it ever held,
 * with its state, for tests.
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
  /** Deduplication id → the message first published under it, and when, within QStash's window. */
  const deduplicated = new Map<string, { messageId: string; at: number }>();
  const deduplicationWindowMs = opts.deduplicationWindowMs ?? DEDUPLICATION_WINDOW_MS;
  const responseTimeoutMs = opts.responseTimeoutMs ?? RESPONSE_TIMEOUT_MS;
  const firstUnder = (id: unknown) => {
    const entry = typeof id === "string" ? deduplicated.get(id) : undefined;
    if (entry && Date.now() - entry.at < deduplicationWindowMs) return entry.messageId;
    if (entry) deduplicated.delete(id as string);
    return undefined;
  };
  const inFlight = new Map<string, AbortController>();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  // Imported once: importing the key for every signature would be most of a delivery's signing cost.
  const signingKey = crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(currentSigningKey),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );

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
      .sign(await signingKey);
  }

  const activeFor = (key: string) =>
    [...delivering].filter((m) => m.state === "delivering" && m.flowControlKey === key).length;

  async function deliver(message: Message) {
    waiting.delete(message);
    delivering.add(message);
    message.state = "delivering";
    const abort = new AbortController();
    inFlight.set(message.messageId, abort);
    const answerDue = setTimeout(() => abort.abort(), responseTimeoutMs);
    let nonRetryable = false;
    // No answer at all (the destination unreachable) is reported as status 0.
    let answer: LastAnswer = { status: 0, headers: {}, body: Buffer.alloc(0) };
    try {
      // Node's own client, not fetch: a delivery is the stand-ins' busiest request, and fetch's
      // web streams and objects cost several times its CPU here.
      const res = await httpRequest(message.url, {
        method: message.method,
        headers: {
          ...message.headers,
          "Upstash-Message-Id": message.messageId,
          "Upstash-Retried": String(message.retried),
          "Upstash-Signature": await sign(message),
        },
        body: message.method === "GET" || message.method === "HEAD" ? undefined : message.body,
        signal: abort.signal,
        // Every delivery counts (Upstash-Retried, the retries left): a dropped one is not resent here.
        resendOnStaleConnection: false,
      });
      nonRetryable = res.headers["upstash-nonretryable-error"] === "true";
      const headers: Record<string, string[]> = {};
      for (const [name, value] of Object.entries(res.headers))
        if (value !== undefined) headers[name] = Array.isArray(value) ? value : [value];
      answer = {
        status: res.status,
        headers,
        body: await readAnswer(res, MAX_ANSWER_BYTES).catch(() => Buffer.alloc(0)),
      };
    } catch {
      // Unreachable, reset, or cancelled: answer stays "no answer".
    } finally {
      clearTimeout(answerDue);
      inFlight.delete(message.messageId);
      delivering.delete(message);
    }
    const { status } = answer;
    message.lastStatus = status;
    if ((message.state as State) === "cancelled" || stopped) return;
    if (status >= 200 && status < 300) message.state = "delivered";
    else if ((status === 489 && nonRetryable) || message.retried >= message.maxRetries) {
      message.state = "failed";
      enqueueFailureCallback(message, answer);
    } else {
      const delayMs = message.delayOf
        ? message.delayOf(message.retried)
        : Math.min(retryBaseMs * 2 ** message.retried, maxRetryDelayMs);
      message.retried += 1;
      message.notBefore = Date.now() + delayMs;
      message.state = "waiting";
      waiting.add(message);
    }
    schedule();
  }

  const newMessageId = () => `msg_${randomUUID()}`;

  function enqueue(message: Omit<Message, "retried" | "createdAt" | "state">) {
    const queued: Message = { ...message, retried: 0, createdAt: Date.now(), state: "waiting" };
    messages.set(queued.messageId, queued);
    waiting.add(queued);
    schedule();
  }

  /**
   * A message QStash gave up on (its retries spent, or a non-retryable answer) with a failure
   * callback: a new message to the callback's URL, signed and retried like any other, whose JSON
   * body describes the lost one (QStash's callback body: the last answer and the source message,
   * bodies in base64, header values as lists).
   */
  function enqueueFailureCallback(source: Message, answer: LastAnswer) {
    const callback = source.failureCallback;
    if (!callback) return;
    const report = {
      status: answer.status,
      header: answer.headers,
      body: answer.body.toString("base64"),
      retried: source.retried,
      maxRetries: source.maxRetries,
      dlqId: `${Date.now()}-0`,
      sourceMessageId: source.messageId,
      url: source.url,
      method: source.method,
      sourceHeader: Object.fromEntries(Object.entries(source.headers).map(([name, value]) => [name, [value]])),
      sourceBody: source.body.toString("base64"),
      notBefore: String(source.notBefore),
      createdAt: String(source.createdAt),
      callerIP: "127.0.0.1",
    };
    enqueue({
      messageId: newMessageId(),
      url: callback.url,
      method: callback.method,
      body: Buffer.from(JSON.stringify(report)),
      headers: { "Content-Type": "application/json", ...callback.headers },
      maxRetries: callback.maxRetries,
      notBefore: Date.now() + callback.delayMs,
    });
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

  const server = createServer(
    guarded("QStash emulator", async (req, res) => {
      const send = (status: number, body?: unknown) =>
        res
          .writeHead(status, { "content-type": "application/json" })
          .end(body === undefined ? "" : JSON.stringify(body));
      if (req.headers.authorization !== `Bearer ${token}`) return send(401, { error: "Unauthorized" });
      const url = req.url ?? "/";

      if (req.method === "POST" && url.startsWith("/v2/publish/")) {
        const destination = decodeURIComponent(url.slice("/v2/publish/".length));
        if (!/^https?:\/\//.test(destination)) return send(400, { error: `invalid destination url: ${destination}` });
        const deduplicationId = req.headers["upstash-deduplication-id"];
        let delivery: Pick<Message, "maxRetries" | "retryDelay" | "delayOf" | "failureCallback">;
        try {
          delivery = {
            maxRetries: retriesOf(req.headers["upstash-retries"]),
            ...retryDelayOf(req.headers["upstash-retry-delay"]),
            failureCallback: failureCallbackOf(req),
          };
        } catch (err) {
          req.resume();
          return send(400, { error: (err as Error).message });
        }
        const first = firstUnder(deduplicationId);
        if (first) {
          req.resume();
          return send(202, { messageId: first, url: destination, deduplicated: true });
        }
        // Taken before the body is read, so a concurrent publish under the same id is a duplicate too.
        const messageId = newMessageId();
        if (typeof deduplicationId === "string") deduplicated.set(deduplicationId, { messageId, at: Date.now() });
        const headers = forwardedHeaders(req, "upstash-forward-");
        const contentType = req.headers["content-type"];
        if (contentType) headers["Content-Type"] = String(contentType);
        const flowValue = String(req.headers["upstash-flow-control-value"] ?? "");
        const parallelism = Number(/parallelism=(\d+)/.exec(flowValue)?.[1] ?? NaN);
        let body: Buffer;
        try {
          body = await readBody(req);
        } catch {
          // The publisher went away mid-body: nothing was queued, so its id must not stand for a message.
          if (typeof deduplicationId === "string") deduplicated.delete(deduplicationId);
          return send(400, { error: "the request body could not be read" });
        }
        enqueue({
          messageId,
          url: destination,
          method: String(req.headers["upstash-method"] ?? "POST"),
          body,
          headers,
          ...delivery,
          flowControlKey: req.headers["upstash-flow-control-key"] as string | undefined,
          parallelism: Number.isFinite(parallelism) ? parallelism : undefined,
          notBefore: Date.now() + parseDuration(req.headers["upstash-delay"] as string | undefined),
        });
        return send(201, { messageId, url: destination });
      }

      const match = /^\/(v2|emulator)\/messages\/([^/?]+)/.exec(url);
      if (match) {
        const message = messages.get(decodeURIComponent(match[2]));
        // QStash keeps a message only while it has deliveries to make: one delivered, given up on or
        // cancelled is gone from its API. The emulator's own path shows every message it ever held.
        const active = message?.state === "waiting" || message?.state === "delivering";
        if (!message || (match[1] === "v2" && !active)) return send(404, { error: "message not found" });
        if (req.method === "GET") return send(200, described(message));
        if (req.method === "DELETE" && match[1] === "v2") {
          // One being delivered is cancelled too: it will not be retried.
          message.state = "cancelled";
          waiting.delete(message);
          return send(200, { cancelled: 1 });
        }
      }
      send(404, { error: "not found" });
    }),
  );

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
