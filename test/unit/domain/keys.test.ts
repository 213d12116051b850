import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateApiKey, generateWebhookSecret, hashApiKey, parseBearer, sha256Hex } from "../../../domain/keys";
import { signatureOf, signInternal, verifyInternal } from "../../../domain/internal-auth";

describe("contract §6 Authentication, rule 2 › key formats", () => {
  it("new keys start spk_, legacy keys sk_, and carry at least 128 bits", () => {
    const key = generateApiKey();
    expect(key).toMatch(/^spk_[A-Za-z0-9]{43}$/);
    expect(generateApiKey("sk_")).toMatch(/^sk_[A-Za-z0-9]{43}$/);
    // 43 uniform base62 characters ≈ 256 bits; at least 128 is the promise.
    expect(43 * Math.log2(62)).toBeGreaterThan(128);
    const many = new Set(Array.from({ length: 1000 }, () => generateApiKey()));
    expect(many.size).toBe(1000);
  });

  it("parses only well-formed Bearer headers with a known prefix", () => {
    const key = generateApiKey();
    expect(parseBearer(`Bearer ${key}`)).toBe(key);
    expect(parseBearer(undefined)).toBeNull();
    expect(parseBearer("")).toBeNull();
    expect(parseBearer(key)).toBeNull();
    expect(parseBearer(`Basic ${key}`)).toBeNull();
    expect(parseBearer(`Bearer`)).toBeNull();
    expect(parseBearer(`Bearer pk_${key.slice(4)}`)).toBeNull();
    expect(parseBearer(`Bearer ${key} extra`)).toBeNull();
  });

  it("hashes keys to stable hex SHA-256", async () => {
    expect(await hashApiKey("spk_abc")).toBe(await hashApiKey("spk_abc"));
    expect(await hashApiKey("spk_abc")).toMatch(/^[0-9a-f]{64}$/);
    expect(await hashApiKey("spk_abc")).not.toBe(await hashApiKey("spk_abd"));
  });

  it("the hash is SHA-256 of the UTF-8 text in lower-case hex, as Node's crypto gives it, for any text", async () => {
    // FIPS 180-2's first example: every stored key hash depends on these exact bytes.
    expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "grapheme", maxLength: 200 }), async (text) => {
        expect(await sha256Hex(text)).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
      }),
    );
  });

  it("webhook secrets follow the Standard Webhooks whsec_ form", () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
  });
});

describe("internal API signatures (encoder → Worker)", () => {
  const secret = "s".repeat(32);
  it("verifies its own signature and refuses a changed body, a wrong secret and an old timestamp", async () => {
    const request = { method: "POST", path: "/internal/sweep", body: JSON.stringify({ attempt: 0 }) };
    const call = signatureOf(await signInternal(secret, request));
    expect(await verifyInternal(secret, request, call)).toBe(true);
    expect(await verifyInternal(secret, { ...request, body: `${request.body} ` }, call)).toBe(false);
    expect(await verifyInternal("t".repeat(32), request, call)).toBe(false);
    expect(await verifyInternal(secret, request, { ...call, timestamp: undefined })).toBe(false);
    const old = signatureOf(await signInternal(secret, request, Date.now() - 10 * 60 * 1000));
    expect(await verifyInternal(secret, request, old)).toBe(false);
  });
});

describe("contract §9.1 Limits › signed link lifetime", () => {
  it("free links last 4 hours; every other plan 7 days, the ceiling for any link", async () => {
    const { LINK_TTL_SECONDS } = await import("../../../domain/plans");
    expect(LINK_TTL_SECONDS).toEqual({ free: 4 * 3600, pro: 7 * 86400, business: 7 * 86400, enterprise: 7 * 86400 });
  });
});
