import { timingSafeEqual } from "hono/utils/buffer";

/**
 * Dashboard passwords: PBKDF2-SHA256 through Web Crypto, so the Worker and the admin CLI (Node)
 * share one implementation. 100,000 iterations is the most Workers' Web Crypto accepts; each
 * user has a random 16-byte salt. Stored as `pbkdf2-sha256$<iterations>$<salt>$<hash>` (base64),
 * so a later change of cost can verify old hashes and rehash them at the next sign-in.
 */
const SCHEME = "pbkdf2-sha256";
export const PBKDF2_ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BITS = 256;

export const PASSWORD_MIN_LENGTH = 8;
/** PBKDF2 prehashes long inputs anyway; the cap only keeps request bodies sensible. */
export const PASSWORD_MAX_LENGTH = 256;

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));

async function derive(password: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Promise<Uint8Array> {
  const material = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, [
    "deriveBits",
  ]);
  const bits = await crypto.subtle.deriveBits(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations },
    material,
    HASH_BITS,
  );
  return new Uint8Array(bits);
}

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await derive(password, salt, PBKDF2_ITERATIONS);
  return `${SCHEME}$${PBKDF2_ITERATIONS}$${toBase64(salt)}$${toBase64(hash)}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, iterations, salt, hash] = stored.split("$");
  if (scheme !== SCHEME || !/^\d+$/.test(iterations ?? "") || !salt || !hash) return false;
  const candidate = await derive(password, fromBase64(salt), Number(iterations));
  // Constant-time: how much of the hash matched must not show in the response time.
  return timingSafeEqual(toBase64(candidate), hash);
}

/**
 * Spends the same PBKDF2 work as a real check, for sign-ins naming an unknown email, so the
 * response time does not tell which addresses have accounts.
 */
export async function burnPasswordCheck(password: string): Promise<void> {
  await derive(password, new Uint8Array(SALT_BYTES), PBKDF2_ITERATIONS);
}
