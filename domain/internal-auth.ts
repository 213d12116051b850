/**
 * HMAC-SHA256 over the timestamp, the nonce, the call's method and path, and its body, for the
 * encoder's calls to the Worker's /internal API. Web Crypto only, so both sides share it. The
 * timestamp bounds how long a captured call stays acceptable; the nonce, which the Worker accepts
 * once (worker/routes/internal/verify.ts), keeps it from being replayed within that window; the
 * method and path keep it from being sent to another route or another job's.
 */
export const INTERNAL_SIGNATURE_HEADER = "x-internal-signature";
export const INTERNAL_TIMESTAMP_HEADER = "x-internal-timestamp";
export const INTERNAL_NONCE_HEADER = "x-internal-nonce";
/** Older signatures are refused so a captured request cannot be replayed later. */
export const MAX_SKEW_MS = 5 * 60 * 1000;

/** 128 random bits in hex: never drawn twice, and a bounded, plain Redis key on the Worker. */
const NONCE = /^[0-9a-f]{32}$/;

/**
 * What a signature binds. `path` is the path the Worker's router matches (`/internal/jobs/<id>/claim`):
 * without the base of API_INTERNAL_URL (a proxy in front serves the Worker under it) and without
 * the query, percent-escapes decoded as the router decodes them.
 */
export interface InternalRequest {
  method: string;
  path: string;
  body: string;
}

/** What a signed call carries in its headers; any of them may be missing from a forged one. */
export interface InternalSignature {
  timestamp: string | undefined;
  nonce: string | undefined;
  signature: string | undefined;
}

/** A call's signature fields from its headers, named in lower case as Node and Hono give them. */
export function signatureOf(headers: Readonly<Record<string, unknown>>): InternalSignature {
  const text = (name: string) => (typeof headers[name] === "string" ? headers[name] : undefined);
  return {
    timestamp: text(INTERNAL_TIMESTAMP_HEADER),
    nonce: text(INTERNAL_NONCE_HEADER),
    signature: text(INTERNAL_SIGNATURE_HEADER),
  };
}

const encoder = new TextEncoder();

function hmacKey(secret: string, usage: "sign" | "verify"): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [usage]);
}

const toHex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

/** The 32 bytes a signature header spells in hex, or null for anything else. */
function signatureBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-f]{64}$/i.test(hex)) return null;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/**
 * The signed text. The method and path go in as a JSON array, which ends where its closing
 * bracket does whatever they hold, so no other method, path and body give the same text.
 */
const signedText = (timestamp: string, nonce: string, { method, path, body }: InternalRequest) =>
  encoder.encode(`${timestamp}.${nonce}.${JSON.stringify([method, path])}.${body}`);

/** The headers of one call. Every call, a retry included, is signed afresh: the Worker refuses a nonce it has seen. */
export async function signInternal(
  secret: string,
  request: InternalRequest,
  now = Date.now(),
  nonce = toHex(crypto.getRandomValues(new Uint8Array(16))),
): Promise<Record<string, string>> {
  const timestamp = String(now);
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret, "sign"), signedText(timestamp, nonce, request));
  return {
    [INTERNAL_TIMESTAMP_HEADER]: timestamp,
    [INTERNAL_NONCE_HEADER]: nonce,
    [INTERNAL_SIGNATURE_HEADER]: toHex(new Uint8Array(mac)),
  };
}

/**
 * Whether the call is signed with `secret`, recently, for this method, path and body; whether
 * its nonce is new is the Worker's check. The comparison with the expected MAC is Web Crypto's own HMAC verify, which compares
 * in constant time (BoringSSL's CRYPTO_memcmp in workerd, OpenSSL's in Node): how long a
 * refusal takes says nothing about how much of a forged signature was right.
 */
export async function verifyInternal(
  secret: string,
  request: InternalRequest,
  { timestamp, nonce, signature }: InternalSignature,
  now = Date.now(),
): Promise<boolean> {
  if (!timestamp || !nonce || !signature || !/^\d+$/.test(timestamp) || !NONCE.test(nonce)) return false;
  if (Math.abs(now - Number(timestamp)) > MAX_SKEW_MS) return false;
  const mac = signatureBytes(signature);
  if (!mac) return false;
  return crypto.subtle.verify("HMAC", await hmacKey(secret, "verify"), mac, signedText(timestamp, nonce, request));
}
