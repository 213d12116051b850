/**
 * HMAC-SHA256 over `${timestamp}.${body}` for the encoder's calls to the Worker's /internal API.
 * Web Crypto only, so both sides share it.
 */
export const INTERNAL_SIGNATURE_HEADER = "x-internal-signature";
export const INTERNAL_TIMESTAMP_HEADER = "x-internal-timestamp";
/** Older signatures are refused so a captured request cannot be replayed later. */
export const MAX_SKEW_MS = 5 * 60 * 1000;

const encoder = new TextEncoder();

function hmacKey(secret: string, usage: "sign" | "verify"): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [usage]);
}

/** The 32 bytes a signature header spells in hex, or null for anything else. */
function signatureBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-f]{64}$/i.test(hex)) return null;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

export async function signInternal(secret: string, body: string, now = Date.now()): Promise<Record<string, string>> {
  const timestamp = String(now);
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret, "sign"), encoder.encode(`${timestamp}.${body}`));
  return {
    [INTERNAL_TIMESTAMP_HEADER]: timestamp,
    [INTERNAL_SIGNATURE_HEADER]: [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join(""),
  };
}

/**
 * The comparison with the expected MAC is Web Crypto's own HMAC verify, which compares in
 * constant time (BoringSSL's CRYPTO_memcmp in workerd, OpenSSL's in Node): how long a refusal
 * takes says nothing about how much of a forged signature was right.
 */
export async function verifyInternal(
  secret: string,
  body: string,
  timestamp: string | undefined,
  signature: string | undefined,
  now = Date.now(),
): Promise<boolean> {
  if (!timestamp || !signature || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(now - Number(timestamp)) > MAX_SKEW_MS) return false;
  const mac = signatureBytes(signature);
  if (!mac) return false;
  return crypto.subtle.verify("HMAC", await hmacKey(secret, "verify"), mac, encoder.encode(`${timestamp}.${body}`));
}
