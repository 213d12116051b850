import ipaddr from "ipaddr.js";
import { holdsCredentials } from "../../domain/urls";
import { JobFailure } from "../failure";

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

export function assertAllowedUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw JobFailure.sourceRefused("not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw JobFailure.sourceRefused(`only http and https URLs are fetched (got ${url.protocol})`);
  }
  if (holdsCredentials(url)) throw JobFailure.sourceRefused("credentials in the URL are not accepted");
  return url;
}
