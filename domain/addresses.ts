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

/**
 * False for what cannot be an IP address in any form ipaddr.js reads (IPv6 has a colon; IPv4,
 * in dotted, octal, hex or single-number form, is digits, hex letters, x and dots): a DNS name,
 * which nearly every source has. ipaddr.isValid finds such a name invalid by throwing and
 * catching two errors, which made it 6% of a creation's CPU in the Worker (bench:profile).
 */
function mayBeIpLiteral(host: string): boolean {
  return host.includes(":") || /^[\da-fx.]+$/i.test(host);
}
