import { sha256Hex } from "../../../domain/keys";

/** 256 random bits, URL-safe: session tokens and form (CSRF) tokens. */
export function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** Stored in place of a session token, so a read of the table does not hand out sign-ins. */
export const tokenDigest = sha256Hex;
