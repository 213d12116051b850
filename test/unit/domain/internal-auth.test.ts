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
  type InternalRequest,
  type InternalSignature,
} from "../../../domain/internal-auth";

const secret = "s".repeat(32);
const job = "5b0f3c1e-8d2a-4c1b-9e7f-0a1b2c3d4e5f";
const otherJob = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a";
const body = JSON.stringify({ claim: 1, progress: 0.5 });
const heartbeat: InternalRequest = { method: "POST", path: `/internal/jobs/${job}/heartbeat`, body };

async function signed(call = heartbeat, now = Date.now(), key = secret): Promise<InternalSignature> {
  return signatureOf(await signInternal(key, call, now));
}

afterEach(() => vi.restoreAllMocks());

describe("internal API signatures: verification", () => {
  it("the signature is 64 hex digits, accepted in either case", async () => {
    const call = await signed();
    expect(call.signature).toMatch(/^[0-9a-f]{64}$/);
    expect(await verifyInternal(secret, heartbeat, call)).toBe(true);
    expect(await verifyInternal(secret, heartbeat, { ...call, signature: call.signature!.toUpperCase() })).toBe(true);
  });

  it("any one hex digit changed, anywhere, is refused", async () => {
    const call = await signed();
    const signature = call.signature!;
    for (let i = 0; i < signature.length; i++) {
      const other = ((parseInt(signature[i], 16) + 1) % 16).toString(16);
      const forged = signature.slice(0, i) + other + signature.slice(i + 1);
      expect(await verifyInternal(secret, heartbeat, { ...call, signature: forged }), `digit ${i}`).toBe(false);
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
      expect(await verifyInternal(secret, heartbeat, { ...call, signature: forged }), JSON.stringify(forged)).toBe(
        false,
      );
    }
  });

  it("timestamps that are not digits, or more than five minutes off either way, are refused", async () => {
    const now = Date.now();
    for (const skew of [MAX_SKEW_MS + 1, -(MAX_SKEW_MS + 1)]) {
      expect(await verifyInternal(secret, heartbeat, await signed(heartbeat, now + skew), now)).toBe(false);
    }
    const call = await signed(heartbeat, now);
    for (const timestamp of ["", "-1", "1e12", `${now}.0`, ` ${now}`]) {
      expect(await verifyInternal(secret, heartbeat, { ...call, timestamp }, now), timestamp).toBe(false);
    }
  });

  it("property: a signature verifies for its own body and secret only", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: "binary" }),
        fc.string({ unit: "binary" }),
        fc.string({ minLength: 16 }),
        async (text, other, key) => {
          const call = await signed({ ...heartbeat, body: text }, Date.now(), key);
          expect(await verifyInternal(key, { ...heartbeat, body: text }, call)).toBe(true);
          if (other !== text) expect(await verifyInternal(key, { ...heartbeat, body: other }, call)).toBe(false);
          expect(await verifyInternal(`${key}x`, { ...heartbeat, body: text }, call)).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("the comparison is Web Crypto's HMAC verify (constant time), not a comparison in JavaScript", async () => {
    const call = await signed();
    const signature = call.signature!;
    const verify = vi.spyOn(crypto.subtle, "verify");
    expect(await verifyInternal(secret, heartbeat, call)).toBe(true);
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
    expect(Object.keys(await signInternal(secret, heartbeat, now)).sort()).toEqual(
      [INTERNAL_NONCE_HEADER, INTERNAL_SIGNATURE_HEADER, INTERNAL_TIMESTAMP_HEADER].sort(),
    );
    const [first, second] = [await signed(heartbeat, now), await signed(heartbeat, now)];
    expect(first.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(second.nonce).not.toBe(first.nonce);
    expect(second.signature).not.toBe(first.signature);
    expect(await verifyInternal(secret, heartbeat, first)).toBe(true);
    expect(await verifyInternal(secret, heartbeat, second)).toBe(true);
  });

  it("the MAC covers the nonce: another nonce, none, or one not of 32 hex digits is refused", async () => {
    const call = await signed();
    const other = (await signed()).nonce;
    for (const nonce of [other, undefined, "", call.nonce!.toUpperCase(), `${call.nonce}0`, call.nonce!.slice(1)])
      expect(await verifyInternal(secret, heartbeat, { ...call, nonce }), String(nonce)).toBe(false);
    // Signed over a nonce of another form, the MAC is right but the nonce is still refused.
    const odd = signatureOf(await signInternal(secret, heartbeat, Date.now(), "not-hex"));
    expect(odd.nonce).toBe("not-hex");
    expect(await verifyInternal(secret, heartbeat, odd)).toBe(false);
  });
});

describe("internal API signatures: the call they were made for", () => {
  it("a heartbeat's signature is refused on another route, another job's route, with another method, or a base path", async () => {
    const call = await signed();
    expect(await verifyInternal(secret, heartbeat, call)).toBe(true);
    const elsewhere: InternalRequest[] = [
      { ...heartbeat, path: `/internal/jobs/${job}/fail` },
      { ...heartbeat, path: `/internal/jobs/${job}/complete` },
      { ...heartbeat, path: `/internal/jobs/${otherJob}/heartbeat` },
      { ...heartbeat, path: `/internal/jobs/${job}/parts/0/heartbeat` },
      { ...heartbeat, path: `/internal/jobs/${job}/heartbeat/` },
      { ...heartbeat, path: `/internal/jobs/${job.toUpperCase()}/heartbeat` },
      { ...heartbeat, path: `/gateway/internal/jobs/${job}/heartbeat` },
      { ...heartbeat, path: "/internal/sweep" },
      { ...heartbeat, method: "PUT" },
      { ...heartbeat, method: "post" },
      { ...heartbeat, method: "" },
    ];
    for (const other of elsewhere)
      expect(await verifyInternal(secret, other, call), `${other.method} ${other.path}`).toBe(false);
  });

  it("property: a signature verifies for its own method, path and body only, however their text is divided again", async () => {
    // The three joined at any separator a framing could use, then divided at two others: each such call is another.
    const separators = [".", " ", "\n", ",", "/"];
    const text = fc.string({ unit: fc.constantFrom(...separators, '"', "[", "]", "a"), maxLength: 5 });
    const request = fc.record({ method: fc.constantFrom("POST", "PUT", "POST."), path: text, body: text });
    await fc.assert(
      fc.asyncProperty(request, fc.constantFrom(...separators), async (one, separator) => {
        const call = await signed(one);
        expect(await verifyInternal(secret, one, call)).toBe(true);
        const joined = [one.method, one.path, one.body].join(separator);
        const at = [...joined].flatMap((char, i) => (separators.includes(char) ? [i] : []));
        for (const i of at)
          for (const j of at.filter((j) => j > i)) {
            const other = { method: joined.slice(0, i), path: joined.slice(i + 1, j), body: joined.slice(j + 1) };
            if (other.method === one.method && other.path === one.path && other.body === one.body) continue;
            expect(await verifyInternal(secret, other, call), JSON.stringify(other)).toBe(false);
          }
      }),
      { numRuns: 200 },
    );
  });
});
