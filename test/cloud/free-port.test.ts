import { describe, expect, it } from "vitest";
import { freePort } from "../../dev/cloud/free-port";

describe("freePort", () => {
  it("never hands one port out twice while the first caller may still be starting its server", async () => {
    // Nothing listens on them meanwhile, as when each caller's server is still starting: 600 random
    // picks from 12,000 ports would repeat one (all but certainly) but for the claims.
    const ports: number[] = [];
    for (let i = 0; i < 600; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
  });
});
