import fc from "fast-check";
import ipaddr from "ipaddr.js";
import { describe, expect, it } from "vitest";
import { isAllowedAddress, isUnfetchableAddress } from "../../../domain/addresses";

/** What isUnfetchableAddress promises, asked of ipaddr.js for every host. */
const reference = (hostname: string) => {
  const host = hostname.replace(/^\[|\]$/g, "");
  return ipaddr.isValid(host) && !isAllowedAddress(host, { allowLoopback: true });
};

describe("addresses a source URL may not name (domain/addresses.ts)", () => {
  it("private, link-local, multicast and reserved literals, in any form ipaddr.js reads; not loopback, not names", () => {
    for (const host of [
      "10.0.0.1",
      "169.254.169.254",
      "192.168.1.1",
      "100.64.0.1",
      "224.0.0.1",
      "0xa.0.0.1",
      "012.0.0.1",
      "167772161",
      "[fd00::1]",
      "[::ffff:10.0.0.1]",
      "[fe80::1]",
    ]) {
      expect(isUnfetchableAddress(host), host).toBe(true);
    }
    for (const host of [
      "127.0.0.1",
      "[::1]",
      "8.8.8.8",
      "[2606:4700::1111]",
      "media.example.com",
      "localhost",
      "cafe.be",
      "10.0.0.1.example.com",
    ]) {
      expect(isUnfetchableAddress(host), host).toBe(false);
    }
  });

  it("answers as ipaddr.js does for any host: names, IPv4 in every notation, IPv6, and arbitrary text", () => {
    const hosts = fc.oneof(
      fc.domain(),
      fc.ipV4(),
      fc.ipV4Extended(),
      fc.ipV6().map((ip) => `[${ip}]`),
      fc.ipV6(),
      fc.stringMatching(/^[\da-fA-FxX.:]{1,40}$/),
      fc.string({ maxLength: 40 }),
    );
    fc.assert(
      fc.property(hosts, (host) => {
        expect(isUnfetchableAddress(host)).toBe(reference(host));
      }),
      { numRuns: 5000 },
    );
  });
});
