import { createHash } from "node:crypto";
import { SignJWT } from "jose";

/**
 * An Upstash-Signature as QStash makes it: a JWT over the body's hash, for `url` (its `sub`),
 * signed with `signingKey`. For requests that did not come through the emulator: a forged
 * key, a message signed for another route, a redelivery.
 */
export function qstashSignature(signingKey: string, url: string, body: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ body: createHash("sha256").update(body).digest("base64url") })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer("Upstash")
    .setSubject(url)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + 300)
    .sign(new TextEncoder().encode(signingKey));
}
