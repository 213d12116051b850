import { describe, expect, it } from "vitest";
import { parsePort } from "../../../dev/port";

describe("npm run dev's PORT", () => {
  it("is 8787 unset or empty, else the number given", () => {
    expect(parsePort(undefined)).toBe(8787);
    expect(parsePort("")).toBe(8787);
    expect(parsePort(" ")).toBe(8787);
    expect(parsePort("8900")).toBe(8900);
    expect(parsePort("1")).toBe(1);
    expect(parsePort("65535")).toBe(65535);
  });

  it("refuses anything but a whole number from 1 to 65535, saying so", () => {
    for (const value of ["abc", "0", "65536", "-1", "8787.5", "1e3", "0x50", "80 80"]) {
      expect(() => parsePort(value), value).toThrow(
        `PORT must be a whole number from 1 to 65535 (unset or empty for 8787); it was "${value}".`,
      );
    }
  });
});
