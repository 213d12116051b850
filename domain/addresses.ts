import ipaddr from "ipaddr.js";

/**
 * IPv6's global unicast space. ipaddr.js calls every address outside its named ranges
 * "unicast", which would let through the rest of ::/8 (IPv4-compatible ::7f00:1 among them)
 * and other space IANA has not allocated.
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/**
 * Which resolved addresses a source may be fetched from. Only globally routable unicast
 * addresses: loopback, private, link-local (cloud metadata at 169.254.169.254), carrier-grade
 * NAT, unique-local, multicast and reserved ranges are refused. Loopback is allowed only when
 * the deployment explicitly says so (local development).
 */
export function isAllowedAddress(address: string, opts: { allowLoopback: boolean }): boolean {
  if (!ipaddr.isValid(address)) return false;
  // IPv4-mapped IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it carries.
  const ip = ipaddr.process(address);
  const range = ip.range();
  if (range === "loopback") return opts.allowLoopback;
  if (ip.kind() === "ipv6" && !ip.match(GLOBAL_UNICAST_V6)) return false;
  return range === "unicast";
}

/**
 * Whether `hostname` (a URL's, brackets and all) is an IP address no deployment fetches from:
 * private, link-local, multicast, reserved. Loopback is not among them: a local deployment serves
 * its sources there, and the encoder, which knows whether it is one, decides.
 */
export function isUnfetchableAddress(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "");
  return mayBeIpLiteral(host) && ipaddr.isValid(host) && !isAllowedAddress(host, { allowLoopback: true });
}

/** What a URL's host names, as far as the URL itself tells: nothing here asks DNS. */
export type HostKind = "public" | "loopback" | "internal";

/**
 * Top-level names that never lead to the public Internet: reserved for local or private use
 * (`local` is mDNS, `internal` and `home.arpa` private networks, `test`, `example`, `invalid`
 * and `onion` special-use) or the usual suffixes of a company's own network.
 */
const INTERNAL_TOP_LEVEL = new Set([
  "local",
  "internal",
  "localdomain",
  "lan",
  "intranet",
  "corp",
  "home",
  "private",
  "test",
  "example",
  "invalid",
  "onion",
  "alt",
]);

/**
 * Where `url`'s host is, judged on the host as URL parsing normalised it: an IPv4 address in any
 * spelling (`0x7f.1`, `2130706433`, `0177.0.0.1`, full-width digits) is dotted decimal by then,
 * and IPv6 compressed in brackets. An address is judged as isAllowedAddress judges a resolved one,
 * IPv4-mapped IPv6 as its IPv4 address. `localhost` and names under it are loopback; a name of one
 * label (`metadata`, `redis`, found through a network's search domains) or under an internal
 * top-level name is internal; any other name is public as far as can be told without resolving it.
 */
export function hostKind(url: URL): HostKind {
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.+$/, "");
  if (mayBeIpLiteral(host) && ipaddr.isValid(host)) {
    if (ipaddr.process(host).range() === "loopback") return "loopback";
    return isAllowedAddress(host, { allowLoopback: false }) ? "public" : "internal";
  }
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback";
  const labels = host.split(".");
  if (labels.length < 2 || host.endsWith(".home.arpa")) return "internal";
  return INTERNAL_TOP_LEVEL.has(labels[labels.length - 1]) ? "internal" : "public";
}

/**
 * False for what cannot be an IP address in any form ipaddr.js reads (IPv6 has a colon; IPv4,
 * in dotted, octal, hex or single-number form, is digits, hex letters, x and dots): a DNS name,
 * which nearly every source has. ipaddr.isValid finds such a name invalid by throwing and
 * catching two errors, a cost docs/benchmarks.md#benchprofile gives for a creation.
 */
function mayBeIpLiteral(host: string): boolean {
  return host.includes(":") || /^[\da-fx.]+$/i.test(host);
}
