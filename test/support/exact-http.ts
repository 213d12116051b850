/**
 * An exchange for the API client over node:http rather than fetch: header values and bodies go
 * out byte for byte as given (Latin-1 strings are the bytes on the wire, repeated headers stay
 * repeated, nothing is trimmed or normalised), a test can write a body of its own as it likes,
 * and a request that gets no answer within REQUEST_TIMEOUT_MS fails as a hang.
 */
import { Agent, request, type ClientRequest, type IncomingMessage } from "node:http";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { parseBody, type Answer, type Exchange, type WireRequest } from "./api-client";

const REQUEST_TIMEOUT_MS = 60_000;

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

/** The body as the server meant it: a request may send any Accept-Encoding, so it may come compressed. */
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

function headersOf(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
  return headers;
}

function readAnswer(res: IncomingMessage): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (chunk: Buffer) => chunks.push(chunk));
    res.on("error", reject);
    res.on("end", () => {
      try {
        const text = decoded(Buffer.concat(chunks), res.headers["content-encoding"]).toString("utf8");
        resolve({ status: res.statusCode ?? 0, body: parseBody(text), text, headers: headersOf(res) });
      } catch (err) {
        reject(err);
      }
    });
  });
}

const label = (req: WireRequest) => `${req.method} ${req.path}`;
const timedOut = (req: WireRequest) => new Error(`${label(req)}: no answer within ${REQUEST_TIMEOUT_MS} ms`);

function options(req: WireRequest, shared: boolean) {
  const { hostname, port } = new URL(req.origin);
  // The path as written, not normalised by a URL parser, so hostile paths (`..`, stray `%`) reach the server as sent.
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter((entry): entry is [string, string | string[]] => entry[1] !== undefined),
  );
  return {
    hostname,
    port: Number(port),
    path: req.path,
    method: req.method,
    headers,
    agent: shared ? agent : false,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  };
}

async function writeBody(outgoing: ClientRequest, body: WireRequest["body"]) {
  if (body instanceof ReadableStream) {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) outgoing.write(chunk);
    outgoing.end();
  } else outgoing.end(body);
}

export const exactExchange: Exchange = (req) =>
  new Promise<Answer>((resolve, reject) => {
    const outgoing = request(options(req, true), (res) => readAnswer(res).then(resolve, reject));
    outgoing.on("error", (err: NodeJS.ErrnoException) => {
      if (err.name === "AbortError") reject(timedOut(req));
      // A kept-alive socket the server closed while idle: the request never reached it (Node's advice: retry).
      else if (outgoing.reusedSocket && (err.code === "ECONNRESET" || err.code === "EPIPE"))
        resolve(exactExchange(req));
      else reject(err);
    });
    writeBody(outgoing, req.body).catch(reject);
  });

/**
 * A request whose body the test writes itself, on a connection of its own: `write` gets the
 * request to write to (it need never end it) and the promise of the answer. The connection is
 * dropped once the answer is in, whatever is still being written.
 */
export async function exchangeStreaming(
  req: WireRequest,
  write: (outgoing: ClientRequest, answered: Promise<Answer>) => Promise<void>,
): Promise<Answer> {
  const outgoing = request(options(req, false));
  const answered = new Promise<Answer>((resolve, reject) => {
    outgoing.on("response", (res) => readAnswer(res).then(resolve, reject));
    // Writing on after the server answered and closed is expected here; only an unanswered error counts.
    outgoing.on("error", (err) => reject(err.name === "AbortError" ? timedOut(req) : err));
  });
  answered.catch(() => undefined);
  await Promise.race([write(outgoing, answered), answered]);
  const res = await answered;
  outgoing.destroy();
  return res;
}
