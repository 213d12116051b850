import fc from "fast-check";
import { contentType, extraHeaders, headerValue, type Body } from "./arbitraries";
import type { Caller, Incoming, Outgoing } from "./client";
import { expectContractError } from "./contract";

/**
 * Who sends a campaign's case: one of its callers (`caller`, taken modulo their number), with any
 * Content-Type and extra headers, and now and then (1 in `freq + 1`) an Authorization of any
 * bytes in place of the caller's key.
 */
export const senderOf = (freq: number) =>
  fc.record({
    caller: fc.nat(),
    authorization: fc.option(headerValue, { freq, nil: undefined }),
    contentType,
    headers: extraHeaders,
  });
export type Sender = typeof senderOf extends (freq: number) => fc.Arbitrary<infer T> ? T : never;

/** The request `who` sends, as one of `callers`. */
export function requestOf(callers: Caller[], who: Sender, method: string, path: string, body?: Body): Outgoing {
  const headers: Record<string, string> = { ...who.headers };
  if (who.contentType !== undefined) headers["Content-Type"] = who.contentType;
  if (who.authorization !== undefined) headers.Authorization = who.authorization;
  return { method, path, caller: callers[who.caller % callers.length], headers, body };
}

/** A forged Authorization is refused before anything else is looked at. */
export function refusedForgery(who: Sender, res: Incoming): boolean {
  if (who.authorization === undefined) return false;
  expectContractError(res, { allowed: ["Unauthorized"] });
  return true;
}
