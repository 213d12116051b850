import type { Redis } from "@upstash/redis/cloudflare";
import ipaddr from "ipaddr.js";
import { describeError } from "../../services/error-log";

export interface ThrottleRule {
  /** What is counted, e.g. `signin:email`; the subject (an address, an email) is appended. */
  name: string;
  limit: number;
  windowSeconds: number;
}

/** Sign-in attempts, successful or not, per client address whatever email they name. */
export const SIGN_IN_PER_ADDRESS: ThrottleRule = { name: "signin:ip", limit: 30, windowSeconds: 15 * 60 };
/** Sign-in attempts at one email from one address: what one source may try at one account. */
export const SIGN_IN_PER_EMAIL_FROM_ADDRESS: ThrottleRule = {
  name: "signin:email-ip",
  limit: 10,
  windowSeconds: 15 * 60,
};
/**
 * Sign-in attempts at one email from every address together: a cap on guesses spread over many
 * networks. An address the account signed in from lately passes it, so spending it does not
 * lock the owner out of the networks they use (countSignInAttempt).
 */
export const SIGN_IN_PER_EMAIL: ThrottleRule = { name: "signin:email", limit: 100, windowSeconds: 15 * 60 };
/** How long a network the account signed in from passes SIGN_IN_PER_EMAIL: a session's longest life. */
const KNOWN_NETWORK_SECONDS = 30 * 24 * 60 * 60;
/** Each sign-up is an account with a free quota: a cap per address keeps scripts from farming them. */
export const SIGN_UP_PER_ADDRESS: ThrottleRule = { name: "signup:ip", limit: 10, windowSeconds: 60 * 60 };

/**
 * What a per-address throttle counts: an IPv4 address, or an IPv6 address's /64. One host
 * usually holds a whole /64 (a VPS, a home line), so counting single IPv6 addresses would give
 * it 2^64 allowances. An IPv4-mapped IPv6 address counts as its IPv4 address (ipaddr.js's
 * `process`); anything else (no address at all) counts as itself.
 */
export function throttledNetwork(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const ip = ipaddr.process(address);
  return ip.kind() === "ipv4"
    ? ip.toString()
    : `${(ip as ipaddr.IPv6).parts
        .slice(0, 4)
        .map((part) => part.toString(16))
        .join(":")}::/64`;
}

export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number; rule: ThrottleRule };

/** A rule's current fixed window and its counter's key. */
function windowOf(rule: ThrottleRule, subject: string, now: number) {
  const window = Math.floor(now / 1000 / rule.windowSeconds);
  return { rule, window, key: `throttle:${rule.name}:${window}:${subject}` };
}

function verdictOf({ rule, window }: ReturnType<typeof windowOf>, count: number, now: number): ThrottleVerdict {
  if (count <= rule.limit) return { allowed: true };
  const windowEnds = (window + 1) * rule.windowSeconds * 1000;
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowEnds - now) / 1000)), rule };
}

/**
 * A Redis outage lets the attempt through, logged: the password hash's cost still bounds
 * guessing, and a cache failure must not lock every user out.
 */
function unavailable(what: string, err: unknown): ThrottleVerdict {
  console.error(
    JSON.stringify({ level: "error", message: "throttle counter unavailable", rule: what, error: describeError(err) }),
  );
  return { allowed: true };
}

/** Counts one attempt against a fixed window in Redis (INCR, then EXPIRE on the window's key, in one round trip). */
export async function countAttempt(
  cache: Redis,
  rule: ThrottleRule,
  subject: string,
  now = Date.now(),
): Promise<ThrottleVerdict> {
  const counted = windowOf(rule, subject, now);
  try {
    const [count] = await cache
      .pipeline()
      .incr(counted.key)
      .expire(counted.key, rule.windowSeconds)
      .exec<[number, number]>();
    return verdictOf(counted, count, now);
  } catch (err) {
    return unavailable(rule.name, err);
  }
}

/** The address first: it never holds a space (a network as throttledNetwork gives it), so no email can reach into it. */
const pairOf = (email: string, network: string) => `${network} ${email}`;
const knownNetworkKey = (email: string, network: string) => `signin-known:${pairOf(email, network)}`;

/**
 * Counts a sign-in attempt at `email` from `network` under SIGN_IN_PER_EMAIL_FROM_ADDRESS and
 * SIGN_IN_PER_EMAIL, and reads whether the account signed in from that network lately, in one
 * round trip. From such a known network only its own count decides: whoever spends the
 * account's attempts elsewhere cannot keep its owner out where they usually sign in.
 */
export async function countSignInAttempt(
  cache: Redis,
  email: string,
  network: string,
  now = Date.now(),
): Promise<ThrottleVerdict> {
  const fromHere = windowOf(SIGN_IN_PER_EMAIL_FROM_ADDRESS, pairOf(email, network), now);
  const fromAll = windowOf(SIGN_IN_PER_EMAIL, email, now);
  try {
    const [countHere, , countAll, , known] = await cache
      .pipeline()
      .incr(fromHere.key)
      .expire(fromHere.key, fromHere.rule.windowSeconds)
      .incr(fromAll.key)
      .expire(fromAll.key, fromAll.rule.windowSeconds)
      .exists(knownNetworkKey(email, network))
      .exec<[number, number, number, number, number]>();
    const here = verdictOf(fromHere, countHere, now);
    if (!here.allowed || known > 0) return here;
    return verdictOf(fromAll, countAll, now);
  } catch (err) {
    return unavailable(`${fromHere.rule.name}, ${fromAll.rule.name}`, err);
  }
}

/** Records a successful sign-in's network, which SIGN_IN_PER_EMAIL then lets through; a Redis outage only loses the record. */
export async function rememberSignInNetwork(cache: Redis, email: string, network: string): Promise<void> {
  try {
    await cache.set(knownNetworkKey(email, network), 1, { ex: KNOWN_NETWORK_SECONDS });
  } catch (err) {
    unavailable("signin-known", err);
  }
}
