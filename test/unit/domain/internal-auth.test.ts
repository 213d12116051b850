import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  INTERNAL_SIGNATURE_HEADER,
  INTERNAL_TIMESTAMP_HEADER,
  MAX_SKEW_MS,
  signInternal,
  verifyInternal,
} from "../../../domain/internal-auth";

const secret = "s".repeat(32);
const body = JSON.stringify({ attempt: 0 });

async function signed(text = body, now = Date.now()) {
  const headers = await signInternal(secret, text, now);
  return { timestamp: headers[INTERNAL_TIMESTAMP_HEADER], signature: headers[INTERNAL_SIGNATURE_HEADER] };
}

afterEach(() => vi.restoreAllMocks());

describe("internal API signatures: verification", () => {
  it("the signature is 64 hex digits, accepted in either case", async () => {
    const { timestamp, signature } = await signed();
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(await verifyInternal(secret, body, timestamp, signature)).toBe(true);
    expect(await verifyInternal(secret, body, timestamp, signature.toUpperCase())).toBe(true);
  });

  it("any one hex digit changed, anywhere, is refused", async () => {
    const { timestamp, signature } = await signed();
    for (let i = 0; i < signature.length; i++) {
      const other = ((parseInt(signature[i], 16) + 1) % 16).toString(16);
      const forged = signature.slice(0, i) + other + signature.slice(i + 1);
      expect(await verifyInternal(secret, body, timestamp, forged), `digit ${i}`).toBe(false);
    }
  });

  it("signatures of another length or alphabet are refused without throwing", async () => {
    const { timestamp, signature } = await signed();
    for (const forged of [
      "",
      signature.slice(1),
      `${signature}0`,
      `${signature}${signature}`,
      `0x${signature.slice(2)}`,
      `${signature.slice(1)}g`,
      ` ${signature.slice(1)}`,
      "ü".repeat(64),
    ]) {
      expect(await verifyInternal(secret, body, timestamp, forged), JSON.stringify(forged)).toBe(false);
    }
  });

  it("timestamps that are not digits, or more than five minutes off either way, are refused", async () => {
    const now = Date.now();
    for (const skew of [MAX_SKEW_MS + 1, -(MAX_SKEW_MS + 1)]) {
      const { timestamp, signature } = await signed(body, now + skew);
      expect(await verifyInternal(secret, body, timestamp, signature, now)).toBe(false);
    }
    const { signature } = await signed(body, now);
    for (const timestamp of ["", "-1", "1e12", `${now}.0`, ` ${now}`]) {
      expect(await verifyInternal(secret, body, timestamp, signature, now), timestamp).toBe(false);
    }
  });

  it("property: a signature verifies for its own body and secret only", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary" }),
        fc.string({ unit: "binary" }),
        fc.string({ minLength: 16 }),
        async (text, other, key) => {
          const headers = await signInternal(key, text);
          const [ts, sig] = [headers[INTERNAL_TIMESTAMP_HEADER], headers[INTERNAL_SIGNATURE_HEADER]];
          expect(await verifyInternal(key, text, ts, sig)).toBe(true);
          if (other !== text) expect(await verifyInternal(key, other, ts, sig)).toBe(false);
          expect(await verifyInternal(`${key}x`, text, ts, sig)).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("the comparison is Web Crypto's HMAC verify (constant time), not a comparison in JavaScript", async () => {
    const { timestamp, signature } = await signed();
    const verify = vi.spyOn(crypto.subtle, "verify");
    expect(await verifyInternal(secret, body, timestamp, signature)).toBe(true);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify.mock.calls[0][0]).toBe("HMAC");
    expect(new Uint8Array(verify.mock.calls[0][2] as ArrayBuffer)).toEqual(
      Uint8Array.from(Buffer.from(signature, "hex")),
    );
  });
});
