/**
 * The campaign's one HTTP client. node:http rather than fetch: it sends header values and
 * bodies byte for byte as given (Latin-1 strings are the bytes on the wire), lets a test stream
 * a chunked body, and reports a response that arrives before the request body is finished. Every response is checked for leaks, and a request that gets no
 * answer within REQUEST_TIMEOUT_MS fails as a hang.
 */
import { Agent, request, type ClientRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { inject } from "vitest";
import { findLeaks, forbidStackInternals } from "./leaks";

export const stack = inject("stack");
forbidStackInternals(stack);

export const REQUEST_TIMEOUT_MS = 60_000;

/** A caller as the campaign knows it: its key, and the account whose signed links it may see. */
export interface Caller {
  apiKey: string;
  accountId: string;
}

export interface Outgoing {
  method: string;
  /** Path under /api/v1 (or absolute from the root when it starts with /internal or /api). */
  path: string;
  /** Sets `Authorization: Bearer <key>` unless `headers` has an Authorization of its own. */
  caller?: Caller;
  headers?: OutgoingHttpHeaders;
  body?: string | Buffer;
}

export interface Incoming {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

const api = new URL(stack.apiUrl);

/**
 * Where a request goes: the path as written, not normalised by a URL parser, so hostile paths
 * (`..`, stray `%`) reach the server as sent.
 */
export function target(path: string) {
  const rooted = /^\/(api|internal|healthz)(\/|$|\?)/.test(path) ? path : `/api/v1${path}`;
  return { hostname: api.hostname, port: Number(api.port), path: rooted };
}

/** The body as the server meant it: campaigns send any Accept-Encoding, so it may come compressed. */
function decoded(raw: Buffer, encoding: string | undefined): Buffer {
  switch (encoding) {
    case "gzip":
      return gunzipSync(raw);
    case "br":
      return brotliDecompressSync(raw);
    case "deflate":
      return inflateSync(raw);
    default:
      return raw;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function label(req: Outgoing) {
  return `${req.method} ${req.path}`;
}

/** What the request carried, as text: the response may echo any of it. */
function requestText(req: Outgoing, headers: OutgoingHttpHeaders): string {
  const body = req.body === undefined ? "" : Buffer.isBuffer(req.body) ? req.body.toString("utf8") : req.body;
  let decodedPath = req.path;
  try {
    decodedPath = decodeURIComponent(req.path);
  } catch {
    // a malformed escape: the raw path is what can come back
  }
  return [req.path, decodedPath, JSON.stringify(headers), body, JSON.stringify(body)].join("\n");
}

function headersOf(req: Outgoing): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = { ...req.headers };
  const hasAuth = Object.keys(headers).some((name) => name.toLowerCase() === "authorization");
  if (req.caller && !hasAuth) headers.Authorization = `Bearer ${req.caller.apiKey}`;
  return headers;
}

/** Fails the test when the response carries anything it must not. */
export function expectNoLeaks(req: Outgoing, res: Incoming, sentHeaders = headersOf(req)) {
  const headerLines = Object.entries(res.headers).map(([name, value]) => `${name}: ${String(value)}`);
  const leaks = findLeaks(`${headerLines.join("\n")}\n${res.text}`, stack, {
    ownAccountId: req.caller?.accountId,
    request: requestText(req, sentHeaders),
  });
  if (leaks.length) throw new Error(`${label(req)} → ${res.status} leaks ${leaks.join("; ")}\n${res.text.slice(0, 2000)}`);
}

function exchange(req: Outgoing, headers: OutgoingHttpHeaders): Promise<Incoming> {
  return new Promise<Incoming>((resolve, reject) => {
    const options = { ...target(req.path), method: req.method, headers, agent, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) };
    const outgoing = request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const text = decoded(Buffer.concat(chunks), res.headers["content-encoding"]).toString("utf8");
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseJson(text) });
      });
    });
    outgoing.on("error", (err: NodeJS.ErrnoException) => {
      if (err.name === "AbortError") reject(new Error(`${label(req)}: no answer within ${REQUEST_TIMEOUT_MS} ms`));
      // A kept-alive socket the server closed while idle: the request never reached it (Node's advice: retry).
      else if (outgoing.reusedSocket && (err.code === "ECONNRESET" || err.code === "EPIPE")) resolve(exchange(req, headers));
      else reject(err);
    });
    outgoing.end(req.body);
  });
}

/** Sends one request and returns the whole response; scanned for leaks before it is returned. */
export async function send(req: Outgoing): Promise<Incoming> {
  const headers = headersOf(req);
  const res = await exchange(req, headers);
  expectNoLeaks(req, res, headers);
  return res;
}

/**
 * A request whose body the test writes itself, on a connection of its own: `write` gets the
 * request to write to (it need never end it) and the promise of the answer. The connection is
 * dropped once the answer is in, whatever is still being written.
 */
export async function sendStreaming(req: Outgoing, write: (outgoing: ClientRequest, answered: Promise<Incoming>) => Promise<void>): Promise<Incoming> {
  const headers = headersOf(req);
  const outgoing = request({ ...target(req.path), method: req.method, headers, agent: false, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const answered = new Promise<Incoming>((resolve, reject) => {
    outgoing.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseJson(text) });
      });
    });
    // Writing on after the server answered and closed is expected here; only an unanswered error counts.
    outgoing.on("error", (err) => reject(err.name === "AbortError" ? new Error(`${label(req)}: no answer within ${REQUEST_TIMEOUT_MS} ms`) : err));
  });
  answered.catch(() => undefined);
  await Promise.race([write(outgoing, answered), answered]);
  const res = await answered;
  outgoing.destroy();
  expectNoLeaks(req, res, headers);
  return res;
}

/** Sends requests a few at a time, in order of the list; the results keep that order. */
export async function sendAll(requests: Outgoing[], concurrency = 8): Promise<Incoming[]> {
  const results: Incoming[] = new Array(requests.length);
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const i = next++;
      results[i] = await send(requests[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, requests.length) }, worker));
  return results;
}
