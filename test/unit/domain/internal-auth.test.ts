import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  INTERNAL_NONCE_HEADER,
  INTERNAL_SIGNATURE_HEADER,
  INTERNAL_TIMESTAMP_HEADER,
  MAX_SKEW_MS,
  signatureOf,
  signInternal,
  verifyInternal,
  type InternalSignature,
} from "../../../domain/internal-auth";

const secret = "s".repeat(32);
const body = JSON.stringify({ attempt: 0 });

async function signed(text = body, now = Date.now(), key = secret): Promise<InternalSignature> {
  return signatureOf(await signInternal(key, text, now));
}

afterEach(() => vi.restoreAllMocks());

describe("internal API signatures: verification", () => {
  it("the signature is 64 hex digits, accepted in either case", async () => {
    const call = await signed();
    expect(call.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(await verifyInternal(secret, body, call)).toBe(true);
    expect(await verifyInternal(secret, body, { ...call, signature: call.signature!.toUpperCase() })).toBe(true);
  });

  it("any one hex digit changed, anywhere, is refused", async () => {
    const call = await signed();
    const signature = call.signature!;
    for (let i = 0; i < signature.length; i++) {
      const other = ((parseInt(signature[i], 16) + 1) % 16).toString(16);
      const forged = signature.slice(0, i) + other + signature.slice(i + 1);
      expect(await verifyInternal(secret, body, { ...call, signature: forged }), `digit ${i}`).toBe(false);
    }
  });

  it("signatures of another length or alphabet are refused without throwing", async () => {
    const call = await signed();
    const signature = call.signature!;
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
      expect(await verifyInternal(secret, body, { ...call, signature: forged }), JSON.stringify(forged)).toBe(false);
    }
  });

  it("timestamps that are not digits, or more than five minutes off either way, are refused", async () => {
    const now = Date.now();
    for (const skew of [MAX_SKEW_MS + 1, -(MAX_SKEW_MS + 1)]) {
      expect(await verifyInternal(secret, body, await signed(body, now + skew), now)).toBe(false);
    }
    const call = await signed(body, now);
    for (const timestamp of ["", "-1", "1e12", `${now}.0`, ` ${now}`]) {
      expect(await verifyInternal(secret, body, { ...call, timestamp }, now), timestamp).toBe(false);
    }
  });

  it("property: a signature verifies for its own body and secret only", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary" }),
        fc.string({ unit: "binary" }),
        fc.string({ minLength: 16 }),
        async (text, other, key) => {
          const call = await signed(text, Date.now(), key);
          expect(await verifyInternal(key, text, call)).toBe(true);
          if (other !== text) expect(await verifyInternal(key, other, call)).toBe(false);
          expect(await verifyInternal(`${key}x`, text, call)).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("the comparison is Web Crypto's HMAC verify (constant time), not a comparison in JavaScript", async () => {
    const call = await signed();
    const signature = call.signature!;
    const verify = vi.spyOn(crypto.subtle, "verify");
    expect(await verifyInternal(secret, body, call)).toBe(true);
    expect(verify).toHaveBeenCalledTimes(1);
    expect(verify.mock.calls[0][0]).toBe("HMAC");
    expect(new Uint8Array(verify.mock.calls[0][2] as ArrayBuffer)).toEqual(
      Uint8Array.from(Buffer.from(signature, "hex")),
    );
  });
});

describe("internal API signatures: the nonce", () => {
  it("each signing draws a new 128-bit nonce, so the same body signed twice in one millisecond gives two calls", async () => {
    const now = Date.now();
    expect(Object.keys(await signInternal(secret, body, now)).sort()).toEqual(
      [INTERNAL_NONCE_HEADER, INTERNAL_SIGNATURE_HEADER, INTERNAL_TIMESTAMP_HEADER].sort(),
    );
    const [first, second] = [await signed(body, now), await signed(body, now)];
    expect(first.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(second.nonce).not.toBe(first.nonce);
    expect(second.signature).not.toBe(first.signature);
    expect(await verifyInternal(secret, body, first)).toBe(true);
    expect(await verifyInternal(secret, body, second)).toBe(true);
  });

  it("the MAC covers the nonce: another nonce, none, or one not of 32 hex digits is refused", async () => {
    const call = await signed();
    const other = (await signed()).nonce;
    for (const nonce of [other, undefined, "", call.nonce!.toUpperCase(), `${call.nonce}0`, call.nonce!.slice(1)])
      expect(await verifyInternal(secret, body, { ...call, nonce }), String(nonce)).toBe(false);
    // Signed over a nonce of another form, the MAC is right but the nonce is still refused.
    const odd = signatureOf(await signInternal(secret, body, Date.now(), "not-hex"));
    expect(odd.nonce).toBe("not-hex");
    expect(await verifyInternal(secret, body, odd)).toBe(false);
  });
});
