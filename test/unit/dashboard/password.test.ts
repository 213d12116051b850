import { describe, expect, it } from "vitest";
import { hashPassword, PBKDF2_ITERATIONS, verifyPassword } from "../../../worker/dashboard/auth/password";

describe("dashboard passwords: PBKDF2-SHA256 through Web Crypto", () => {
  it("verifies the password it hashed and nothing else", async () => {
    const stored = await hashPassword("correct horse battery staple");
    expect(await verifyPassword("correct horse battery staple", stored)).toBe(true);
    for (const wrong of [
      "correct horse battery stapl",
      "Correct horse battery staple",
      "",
      "correct horse battery staple ",
    ]) {
      expect(await verifyPassword(wrong, stored), JSON.stringify(wrong)).toBe(false);
    }
  });

  it("stores scheme, 100,000 iterations, a fresh 16-byte salt and a 32-byte hash", async () => {
    const [a, b] = await Promise.all([hashPassword("same password"), hashPassword("same password")]);
    const [scheme, iterations, salt, hash] = a.split("$");
    expect(scheme).toBe("pbkdf2-sha256");
    expect(Number(iterations)).toBe(PBKDF2_ITERATIONS);
    expect(PBKDF2_ITERATIONS).toBe(100_000);
    expect(Buffer.from(salt, "base64")).toHaveLength(16);
    expect(Buffer.from(hash, "base64")).toHaveLength(32);
    expect(b.split("$")[2]).not.toBe(salt);
    expect(b).not.toBe(a);
  });

  it("agrees with Node's own PBKDF2 for the stored salt and iteration count", async () => {
    const { pbkdf2Sync } = await import("node:crypto");
    const stored = await hashPassword("interoperable");
    const [, iterations, salt, hash] = stored.split("$");
    expect(
      pbkdf2Sync("interoperable", Buffer.from(salt, "base64"), Number(iterations), 32, "sha256").toString("base64"),
    ).toBe(hash);
  });

  it("refuses, without throwing, stored values that are not its format", async () => {
    const stored = await hashPassword("pw");
    const [, iterations, salt] = stored.split("$");
    for (const bad of [
      "",
      "plain",
      `bcrypt$${iterations}$${salt}$x`,
      `pbkdf2-sha256$many$${salt}$x`,
      `pbkdf2-sha256$${iterations}$$`,
    ]) {
      expect(await verifyPassword("pw", bad), bad).toBe(false);
    }
  });
});
