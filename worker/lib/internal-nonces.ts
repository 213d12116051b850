import type { Redis } from "@upstash/redis/cloudflare";
import { MAX_SKEW_MS } from "../../domain/internal-auth";

/**
 * How long a nonce is remembered. A call stays acceptable while its timestamp is within
 * MAX_SKEW_MS of the Worker's clock, so one stamped ahead is good for up to twice that from
 * when it is first seen; a minute more, so the record never lapses while the call could pass.
 */
const NONCE_MEMORY_SECONDS = (2 * MAX_SKEW_MS) / 1000 + 60;

/**
 * Records an internal call's nonce: true the first time, false for a replay. One round trip
 * (SET NX) for a new nonce. The Upstash client sends a command again when its answer was lost,
 * so a SET NX refused may be this very request's own that landed: the record holds a token of
 * the request's own, read back (a second round trip, only then) to tell the two apart.
 */
export async function firstUseOfNonce(cache: Redis, nonce: string): Promise<boolean> {
  const key = `internal-nonce:${nonce}`;
  const mine = crypto.randomUUID();
  if ((await cache.set(key, mine, { nx: true, ex: NONCE_MEMORY_SECONDS })) !== null) return true;
  return (await cache.get<string>(key)) === mine;
}
