import { isUnfetchableAddress } from "./addresses";
import { unstorableTextPaths } from "./storable-text";

/**
 * An absolute http(s) URL with a host: the only kind of source the service fetches. Raw spaces
 * and control characters are refused rather than silently percent-encoded by the URL parser:
 * the string is stored and echoed as sent, so it must already be a well-formed URL; so is an
 * unpaired surrogate, which the parser would turn into U+FFFD and Postgres cannot store.
 */
export function isAbsoluteHttpUrl(value: unknown): value is string {
  return httpUrl(value) !== null;
}

/** The URL `value` is when it is an absolute http(s) URL as isAbsoluteHttpUrl means it; null otherwise. */
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
