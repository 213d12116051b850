import { describe, expect, it } from "vitest";
import { throttledNetwork } from "../../../worker/dashboard/auth/throttle";

describe("throttledNetwork: what a per-address throttle counts", () => {
  it("an IPv4 address as itself; an IPv6 address as its /64, however it is spelt", () => {
    expect(throttledNetwork("203.0.113.7")).toBe("203.0.113.7");
    expect(throttledNetwork("2001:db8:a:b:1:2:3:4")).toBe("2001:db8:a:b::/64");
    expect(throttledNetwork("2001:0DB8:000a:000b:ffff::1")).toBe("2001:db8:a:b::/64");
    expect(throttledNetwork("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(throttledNetwork("2001:db8:0:0:ffff:ffff:ffff:ffff")).toBe("2001:db8:0:0::/64");
    expect(throttledNetwork("::1")).toBe("0:0:0:0::/64");
    expect(throttledNetwork("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
  });

  it("an IPv4-mapped IPv6 address as the IPv4 address it maps", () => {
    expect(throttledNetwork("::ffff:203.0.113.7")).toBe("203.0.113.7");
  });
});
