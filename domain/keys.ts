/** API key format, generation and hashing. Web Crypto only, so the Worker and Node share it. */

/** New keys start spk_; sk_ is the older format, still accepted. */
export type KeyPrefix = "spk_" | "sk_";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** 43 base62 characters carry 256 bits; guessing is hopeless. */
const KEY_BODY_LENGTH = 43;
const KEY_PATTERN = /^(spk_|sk_)[A-Za-z0-9]{16,128}$/;

export function generateApiKey(prefix: KeyPrefix = "spk_"): string {
  // Rejection sampling keeps every character uniform over the 62-letter alphabet.
  let body = "";
  while (body.length < KEY_BODY_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(64))) {
      if (byte < 248 && body.length < KEY_BODY_LENGTH) body += ALPHABET[byte % 62];
    }
  }
  return prefix + body;
}

/** The key in a well-formed `Authorization: Bearer …` header, or null for any other shape. */
export function parseBearer(header: string | undefined | null): string | null {
  if (!header) return null;
  const match = /^Bearer ([^\s]+)$/.exec(header.trim());
  if (!match) return null;
  return KEY_PATTERN.test(match[1]) ? match[1] : null;
}

const HEX_OF_BYTE = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/**
 * SHA-256 of the text, in hex: how keys, session tokens and request bodies are stored and
 * compared. Every authenticated request hashes its key, so the digest is mapped to hex through a
 * byte table (docs/benchmarks.md#benchprofile).
 */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  let hex = "";
  for (const byte of digest) hex += HEX_OF_BYTE[byte];
  return hex;
}

/** How an API key is stored and looked up: its SHA-256. */
export const hashApiKey = (key: string): Promise<string> => sha256Hex(key);

export function generateWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}
