/**
 * The campaigns' requests: the suites' API client (test/support/api-client.ts) over the exact
 * exchange (test/support/exact-http.ts), so header values and bodies reach the service byte for
 * byte as the arbitraries wrote them. Every answer is checked for leaks before a test sees it.
 */
import type { ClientRequest } from "node:http";
import { inject } from "vitest";
import { type Answer, createApiClient, type RawRequest, type WireRequest, wireRequest } from "../support/api-client";
import { exactExchange, exchangeStreaming } from "../support/exact-http";
import { findLeaks, forbidStackInternals } from "./leaks";

export const stack = inject("stack");
forbidStackInternals(stack);

/** A caller as the campaign knows it: its key, and the account whose signed links it may see. */
export interface Caller {
  apiKey: string;
  accountId: string;
}

/** A raw request, sent with `Authorization: Bearer <key>` of its caller unless `headers` has an Authorization of its own. */
export interface Outgoing extends RawRequest {
  caller?: Caller;
  body?: string | Buffer;
}

export type Incoming = Answer;

function bodyText(body: WireRequest["body"]): string {
  if (body === undefined) return "";
  if (typeof body === "string") return body;
  return body instanceof Uint8Array ? Buffer.from(body).toString("utf8") : "";
}

/** What the request carried, as text: the response may echo any of it. */
function requestText(req: WireRequest): string {
  const body = bodyText(req.body);
  let decodedPath = req.path;
  try {
    decodedPath = decodeURIComponent(req.path);
  } catch {
    // a malformed escape: the raw path is what can come back
  }
  return [req.path, decodedPath, JSON.stringify(req.headers), body, JSON.stringify(body)].join("\n");
}

/**
 * Per account, the source URLs of the jobs it created: its own reads give them back (a job's
 * inputUrl may name any address, the database's included), and nothing else it sent.
 */
const storedUrls = new Map<string, Set<string>>();

function createdInputUrl(req: WireRequest, res: Answer): string | undefined {
  if (res.status !== 201) return undefined;
  try {
    const { inputUrl } = JSON.parse(bodyText(req.body)) as { inputUrl?: unknown };
    return typeof inputUrl === "string" ? inputUrl : undefined;
  } catch {
    return undefined;
  }
}

/** Fails the test when the response carries anything it must not. */
function expectNoLeaks(req: WireRequest, res: Answer, caller?: Caller) {
  const headerLines = [...res.headers].map(([name, value]) => `${name}: ${value}`);
  const own = caller ? (storedUrls.get(caller.accountId) ?? new Set<string>()) : new Set<string>();
  const request = [requestText(req), ...own].join("\n");
  const leaks = findLeaks(`${headerLines.join("\n")}\n${res.text}`, stack, {
    ownAccountId: caller?.accountId,
    request,
  });
  if (leaks.length)
    throw new Error(`${req.method} ${req.path} → ${res.status} leaks ${leaks.join("; ")}\n${res.text.slice(0, 2000)}`);
  const created = createdInputUrl(req, res);
  if (caller && created !== undefined) storedUrls.set(caller.accountId, own.add(created));
}

/** The typed client as this caller (anonymous without one); its answers are scanned for leaks too. */
export function clientAs(caller?: Caller) {
  return createApiClient({
    baseUrl: stack.apiUrl,
    apiKey: caller?.apiKey,
    exchange: exactExchange,
    onAnswer: (req, res) => expectNoLeaks(req, res, caller),
  });
}

/** Sends one request and returns the whole response; scanned for leaks before it is returned. */
export function send({ caller, ...request }: Outgoing): Promise<Incoming> {
  return clientAs(caller).raw(request);
}

/**
 * A request whose body the test writes itself, on a connection of its own: `write` gets the
 * request to write to (it need never end it) and the promise of the answer.
 */
export async function sendStreaming(
  { caller, ...request }: Outgoing,
  write: (outgoing: ClientRequest, answered: Promise<Incoming>) => Promise<void>,
): Promise<Incoming> {
  const wire = wireRequest(stack.apiUrl, request, caller?.apiKey);
  const res = await exchangeStreaming(wire, write);
  expectNoLeaks(wire, res, caller);
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
