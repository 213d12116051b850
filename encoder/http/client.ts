import http, { type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { Readable } from "node:stream";

/**
 * Every outbound request the encoder makes (sources, the Worker's /internal API, storage) goes
 * through Node's own http/https. The fetch bundled with Node 20 is undici, whose HTTP/1 parser
 * can throw from a socket event handler when a server closes the connection while a response is
 * paused for backpressure (undici 6 and 7 do; undici 8 needs Node 22): nothing
 * can catch that, and it takes the whole process down. Node's client reports every failure as
 * an error on the request or response, which the promise below turns into a rejection.
 */

export interface HttpRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  /** Headers made again for each transmission, the resend below included: a signed call's nonce is good once. */
  signedHeaders?: () => Promise<Record<string, string>>;
  /** In memory, or a file's bytes as a stream made afresh for each transmission (the resend below included). */
  body?: Buffer | string | (() => Readable);
  signal?: AbortSignal;
  /**
   * Resolves host names for this request's connection. A request with its own lookup gets a
   * connection of its own (no pooling), so every connection it makes has been resolved by it.
   */
  lookup?: LookupFunction;
  /** From the request's start until the TCP connection is open (DNS included). */
  connectTimeoutMs?: number;
  /** Longest silence on the connection, at any stage, before the request is given up. */
  idleTimeoutMs?: number;
  /**
   * Send once more when a pooled connection turns out closed (the default). Off for a caller
   * that must count each request it makes, such as a queue counting deliveries: a server that
   * drops a request looks the same as a stale connection.
   */
  resendOnStaleConnection?: boolean;
}

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as a stream: read it to the end, or destroy it (which closes the connection). */
  body: IncomingMessage;
}

/** A request that timed out; `code` says which limit it hit. */
export class HttpTimeoutError extends Error {
  constructor(readonly code: "ECONNECTTIMEOUT" | "EIDLETIMEOUT") {
    super(code === "ECONNECTTIMEOUT" ? "connection timed out" : "no data within the idle timeout");
  }
}

const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** undici's default headers and body timeouts, as fetch would give these requests. */
const DEFAULT_IDLE_TIMEOUT_MS = 300_000;

/** Pooled connections for the repeated calls to the Worker and to storage. */
const pooled = {
  "http:": new http.Agent({ keepAlive: true }),
  "https:": new https.Agent({ keepAlive: true }),
};

function send(url: URL, options: HttpRequestOptions): Promise<{ response: HttpResponse; reusedSocket: boolean }> {
  const client = url.protocol === "https:" ? https : http;
  const agent = options.lookup ? false : pooled[url.protocol as keyof typeof pooled];
  if (agent === undefined) return Promise.reject(new TypeError(`Unsupported protocol ${url.protocol}`));
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method: options.method ?? "GET",
      headers: options.headers,
      signal: options.signal,
      lookup: options.lookup,
      agent,
    });
    let response: IncomingMessage | undefined;
    // A response being read gets the error itself; otherwise its reader would see only "aborted".
    const timedOut = (code: HttpTimeoutError["code"]) => {
      const err = new HttpTimeoutError(code);
      if (response && !response.complete) response.destroy(err);
      req.destroy(err);
    };
    const connectTimer = setTimeout(
      () => timedOut("ECONNECTTIMEOUT"),
      options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    );
    req.on("socket", (socket) => {
      if (socket.connecting) socket.once("connect", () => clearTimeout(connectTimer));
      else clearTimeout(connectTimer);
    });
    req.setTimeout(options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, () => timedOut("EIDLETIMEOUT"));
    // Stays attached for the request's whole life: an error after the response has arrived
    // (the connection dropping mid-body) also reaches the body stream, whose reader sees it.
    req.on("error", (err) => {
      clearTimeout(connectTimer);
      reject(Object.assign(err, { reusedSocket: req.reusedSocket }));
    });
    req.on("close", () => clearTimeout(connectTimer));
    req.on("response", (res) => {
      response = res;
      resolve({
        response: { status: res.statusCode ?? 0, headers: res.headers, body: res },
        reusedSocket: req.reusedSocket,
      });
    });
    const body = options.body;
    if (typeof body !== "function") req.end(body);
    else {
      const stream = body();
      // A file that cannot be read fails the request, which reports it as any other failure.
      stream.once("error", (err) => req.destroy(err));
      req.once("close", () => stream.destroy());
      stream.pipe(req);
    }
  });
}

/**
 * One HTTP request; resolves once the response headers are in. Redirects are not followed. A
 * request that fails because the server had closed the pooled connection it was sent on is
 * sent once more on a new one, as Node's documentation advises (its body in memory, or read again).
 */
export async function httpRequest(url: URL | string, options: HttpRequestOptions = {}): Promise<HttpResponse> {
  const target = typeof url === "string" ? new URL(url) : url;
  const transmit = async () => {
    const headers = options.signedHeaders
      ? { ...options.headers, ...(await options.signedHeaders()) }
      : options.headers;
    return (await send(target, { ...options, headers })).response;
  };
  try {
    return await transmit();
  } catch (err) {
    const e = err as { code?: string; reusedSocket?: boolean };
    if (
      options.resendOnStaleConnection === false ||
      !e.reusedSocket ||
      (e.code !== "ECONNRESET" && e.code !== "EPIPE") ||
      options.signal?.aborted
    )
      throw err;
    return await transmit();
  }
}

/** The whole body, refusing one larger than `maxBytes` (answers here are small documents). */
export async function readBody(res: HttpResponse, maxBytes = 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      res.body.destroy();
      throw new Error(`response body larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
