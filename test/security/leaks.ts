/**
 * What no response may carry: another account's data, a storage key, a stack trace, an internal
 * address or a secret. Every response of the campaign is scanned (see client.ts); a response may
 * still echo whatever its own request sent.
 */
import type { StackInfo } from "../support/stack";

interface Needle {
  text: string;
  what: string;
  /** The account this belongs to, which may see it; none for the service's own internals. */
  owner?: string;
}

const needles: Needle[] = [];

/** Registers a string that must never reach a client (but `owner`) unless the client sent it. */
export function forbid(text: string, what: string, owner?: string) {
  if (text.length > 0) needles.push({ text, what, owner });
}

const hostOf = (url: string) => new URL(url).host;

/** The local cloud's addresses and secrets, and the forms any internal address takes. */
export function forbidStackInternals(stack: StackInfo) {
  const { cloud } = stack;
  forbid(hostOf(cloud.s3.endpoint), "the S3 endpoint");
  forbid(cloud.neonWsProxy.replace(/^\w+:\/\//, ""), "the database WebSocket proxy");
  forbid(stack.databaseUrl, "the database URL");
  forbid(hostOf(stack.databaseUrl), "the database address");
  forbid(hostOf(cloud.qstash.url), "the queue address");
  forbid(hostOf(cloud.redis.url), "the Redis REST address");
  forbid(hostOf(stack.encoderUrl), "the encoder address");
  forbid(cloud.s3.accessKeyId, "the S3 access key id");
  forbid(cloud.s3.secretAccessKey, "the S3 secret key");
  forbid(cloud.qstash.token, "the QStash token");
  forbid(cloud.qstash.currentSigningKey, "a QStash signing key");
  forbid(cloud.qstash.nextSigningKey, "a QStash signing key");
  forbid(cloud.redis.token, "the Redis REST token");
  forbid(stack.internalSecret, "the internal secret");
  forbid("postgres://", "a database URL");
  forbid("postgresql://", "a database URL");
  forbid("redis://", "a Redis URL");
  forbid("outputs/", "a storage key");
}

/**
 * Stack traces and source locations, in V8's and workerd's forms (`at f (index.js:50856:3)`).
 * Each pattern begins with a fixed character, so scanning a response of megabytes stays linear.
 */
const TRACES: [RegExp, string][] = [
  [/\n\s+at\s/g, "a stack trace"],
  [/\.(?:ts|js|mjs|cjs):\d+:\d+/g, "a source location"],
  [/node_modules/g, "a dependency path"],
];

export interface LeakScope {
  /** The account whose own signed output links may appear in the response. */
  ownAccountId?: string;
  /** Everything the request carried (path, headers, body): a response may echo it. */
  request: string;
}

/**
 * Signed links to the caller's own outputs and uploads are the one place the storage address and
 * key may appear; they are cut out first, and any other storage URL is a leak.
 */
function withoutOwnSignedLinks(text: string, stack: StackInfo, scope: LeakScope, leaks: string[]): string {
  const endpoint = stack.cloud.s3.endpoint.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`${endpoint}[^"\\s]*`, "g"), (link) => {
    if (scope.request.includes(link)) return "";
    const url = new URL(link);
    const own =
      scope.ownAccountId !== undefined &&
      ["outputs", "uploads"].some((root) =>
        url.pathname.startsWith(`/${stack.cloud.s3.bucket}/${root}/${scope.ownAccountId}/`),
      );
    if (!own || !url.searchParams.has("X-Amz-Signature"))
      leaks.push(`a storage URL that is not a signed link to the caller's own output or upload: ${link}`);
    return "";
  });
}

/** Every leak found in one response (its headers and body as text); empty when clean. */
export function findLeaks(response: string, stack: StackInfo, scope: LeakScope): string[] {
  const leaks: string[] = [];
  const text = withoutOwnSignedLinks(response, stack, scope, leaks);
  for (const { text: needle, what, owner } of needles) {
    if (owner !== undefined && owner === scope.ownAccountId) continue;
    if (text.includes(needle) && !scope.request.includes(needle)) leaks.push(`${what} (${needle})`);
  }
  for (const [pattern, what] of TRACES) {
    for (const [match] of text.matchAll(pattern)) {
      if (!scope.request.includes(match)) leaks.push(`${what}: ${JSON.stringify(match)}`);
    }
  }
  return leaks;
}
