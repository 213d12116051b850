import type { Redis } from "@upstash/redis/cloudflare";
import ipaddr from "ipaddr.js";
import { describeError } from "../../errors";

export interface ThrottleRule {
  /** What is counted, e.g. `signin:email`; the subject (an address, an email) is appended. */
  name: string;
  limit: number;
  windowSeconds: number;
}

/** Sign-in attempts, successful or not, per client address and per email. */
export const SIGN_IN_PER_ADDRESS: ThrottleRule = { name: "signin:ip", limit: 30, windowSeconds: 15 * 60 };
export const SIGN_IN_PER_EMAIL: ThrottleRule = { name: "signin:email", limit: 10, windowSeconds: 15 * 60 };
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

export type ThrottleVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Counts one attempt against a fixed window in Redis (INCR, then EXPIRE on the window's key, in
 * one round trip). A Redis outage lets the attempt through, logged: the password hash's cost
 * still bounds guessing, and a cache failure must not lock every user out.
 */
export async function countAttempt(
  cache: Redis,
  rule: ThrottleRule,
  subject: string,
  now = Date.now(),
): Promise<ThrottleVerdict> {
  const window = Math.floor(now / 1000 / rule.windowSeconds);
  const key = `throttle:${rule.name}:${window}:${subject}`;
  try {
    const [count] = await cache.pipeline().incr(key).expire(key, rule.windowSeconds).exec<[number, number]>();
    if (count <= rule.limit) return { allowed: true };
    const windowEnds = (window + 1) * rule.windowSeconds * 1000;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((windowEnds - now) / 1000)) };
  } catch (err) {
    console.error(
      JSON.stringify({
        level: "error",
        message: "throttle counter unavailable",
        rule: rule.name,
        error: describeError(err),
      }),
    );
    return { allowed: true };
  }
}
