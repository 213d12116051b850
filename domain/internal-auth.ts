/**
 * HMAC-SHA256 over `${timestamp}.${body}` for the encoder's calls to the Worker's /internal API.
 * Web Crypto only, so both sides share it.
 */
export const INTERNAL_SIGNATURE_HEADER = "x-internal-signature";
export const INTERNAL_TIMESTAMP_HEADER = "x-internal-timestamp";
/** Older signatures are refused so a captured request cannot be replayed later. */
export const MAX_SKEW_MS = 5 * 60 * 1000;

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message));
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function signInternal(secret: string, body: string, now = Date.now()): Promise<Record<string, string>> {
  const timestamp = String(now);
  return {
    [INTERNAL_TIMESTAMP_HEADER]: timestamp,
    [INTERNAL_SIGNATURE_HEADER]: await hmacHex(secret, `${timestamp}.${body}`),
  };
}

export async function verifyInternal(
  secret: string,
  body: string,
  timestamp: string | undefined,
  signature: string | undefined,
  now = Date.now(),
): Promise<boolean> {
  if (!timestamp || !signature || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(now - Number(timestamp)) > MAX_SKEW_MS) return false;
  const expected = await hmacHex(secret, `${timestamp}.${body}`);
  if (expected.length !== signature.length) return false;
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ signature.charCodeAt(i);
  return diff === 0;
}
