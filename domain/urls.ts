import { hostKind, isUnfetchableAddress } from "./addresses";
import { unstorableTextPaths } from "./storable-text";

/**
 * The URL `value` is when it is an absolute http(s) URL with a host, the only kind the service
 * fetches or sends to; null otherwise. Raw spaces and control characters are refused rather
 * than silently percent-encoded by the URL parser: the string is stored and echoed as sent, so
 * it must already be a well-formed URL; so is an unpaired surrogate, which the parser would turn
 * into U+FFFD and Postgres cannot store.
 */
function httpUrl(value: unknown): URL | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a stored URL must not hold.
  if (typeof value !== "string" || /[\u0000-\u0020\u007f]/.test(value) || unstorableTextPaths(value, 1).length > 0)
    return null;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname.length > 0 ? url : null;
  } catch {
    return null;
  }
}

/**
 * A source the encoder will fetch: an absolute http(s) URL without a user name or password (it
 * sends no credentials) whose host is not a private or otherwise unroutable IP address (its
 * source guard refuses those), so a job naming one does not take a quota unit only to fail.
 * A host name is resolved by the encoder alone, at the moment it connects.
 */
export function isSourceUrl(value: unknown): value is string {
  const url = httpUrl(value);
  return url !== null && !holdsCredentials(url) && !isUnfetchableAddress(url.hostname);
}

export const WEBHOOK_URL_MAX_LENGTH = 2048;

/**
 * Why the service will not send webhooks to `url`, or null when it will: the dashboard asks when
 * a URL is set, the Worker again before each delivery. An absolute http(s) URL, without a user
 * name or password, whose host is public (hostKind): never a private, link-local, reserved or
 * internal address or name, and loopback only where the deployment allows it (local development).
 * A public name that resolves inside is the platform's to stop: docs/security.md#webhook-addresses.
 */
export function webhookUrlProblem(url: string, opts: { allowLoopback: boolean }): string | null {
  if (url.length > WEBHOOK_URL_MAX_LENGTH) return `The URL is longer than ${WEBHOOK_URL_MAX_LENGTH} characters.`;
  const parsed = httpUrl(url);
  if (!parsed) return "The webhook URL must be an absolute http:// or https:// URL.";
  // fetch refuses a URL with credentials, so every attempt would fail; a receiver checks the signature instead.
  if (holdsCredentials(parsed))
    return "The webhook URL must not hold a user name or password: deliveries cannot send them. Check the signature instead.";
  const kind = hostKind(parsed);
  if (kind === "public" || (kind === "loopback" && opts.allowLoopback)) return null;
  const what = kind === "loopback" ? "loopback" : "private, reserved or internal";
  return `Webhooks go to public addresses only: ${parsed.hostname} is a ${what} address or name.`;
}

/** Whether an absolute URL carries a user name or password, which fetch and the encoder will not send. */
export function holdsCredentials(url: string | URL): boolean {
  const { username, password } = typeof url === "string" ? new URL(url) : url;
  return Boolean(username || password);
}

/**
 * The public URL of a service's route: its public base (a Worker's PUBLIC_URL, the encoder's)
 * and the route's path, from the base's normalised form (the host in lower case, no default
 * port, no trailing slash, no query). It is what QStash is told to call and what its signature
 * names, so the publisher and the receiver build it here, and two spellings of one address in
 * two settings still agree. A path in the base is kept, for a service behind a proxy that serves
 * it under one.
 */
export function routeUrl(base: string, path: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}${path}`;
  url.search = "";
  url.hash = "";
  return url.href;
}
