import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { hostKind } from "../../../domain/addresses";
import { webhookUrlProblem } from "../../../domain/urls";

const PRODUCTION = { allowLoopback: false };
const DEVELOPMENT = { allowLoopback: true };
const REFUSED = /^Webhooks go to public addresses only: /;
/** What URL parsing makes of an address in any spelling: dotted decimal, or IPv6 in brackets (never a name). */
const ADDRESS = /^(\d{1,3}\.){3}\d{1,3}$|^\[[\da-f:.]+\]$/;

/** IPv4 space that is not the public Internet's, written out here rather than taken from ipaddr.js. */
const NON_PUBLIC_V4: [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];
const LOOPBACK_V4: [string, number] = ["127.0.0.0", 8];
const PUBLIC_V4: [string, number][] = [
  ["8.8.8.0", 24],
  ["1.1.1.0", 24],
  ["93.184.216.0", 24],
  ["151.101.0.0", 16],
];

const toNumber = (dotted: string) => dotted.split(".").reduce((n, part) => n * 256 + Number(part), 0);

/** An address of the block, as a 32-bit number. */
const inBlock = ([base, bits]: [string, number]) =>
  fc.nat({ max: 2 ** (32 - bits) - 1 }).map((offset) => toNumber(base) + offset);

const FULL_WIDTH_DIGITS = (text: string) => text.replace(/\d/g, (d) => String.fromCharCode(0xff10 + Number(d)));

/** One number of an IPv4 spelling: decimal, octal with a leading 0, or hex in either case. */
const numberSpelling = (n: number) =>
  fc.constantFrom(
    String(n),
    `0${n.toString(8)}`,
    `0x${n.toString(16)}`,
    `0X${n.toString(16).toUpperCase()}`,
    `0x${n.toString(16).padStart(8, "0")}`,
  );

/**
 * The IPv4 address `v` as a URL may spell it, every one of which URL parsing reads as `v`: four,
 * three, two parts or one number, each part in decimal, octal or hex, a trailing dot, full-width
 * digits and dots; or as IPv4-mapped IPv6, dotted or in hex groups, compressed or not.
 */
function v4Spelling(v: number): fc.Arbitrary<string> {
  const bytes = [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
  const hex = (n: number) => n.toString(16);
  const partsOf = (count: 1 | 2 | 3 | 4) =>
    count === 4
      ? bytes
      : count === 3
        ? [bytes[0], bytes[1], bytes[2] * 256 + bytes[3]]
        : count === 2
          ? [bytes[0], (v >>> 0) & 0xffffff]
          : [v >>> 0];
  const dotted = fc
    .constantFrom<1 | 2 | 3 | 4>(1, 2, 3, 4)
    .chain((count) => fc.tuple(...partsOf(count).map(numberSpelling)))
    .chain((parts) => fc.constantFrom(parts.join("."), `${parts.join(".")}.`));
  const fullWidth = fc.constantFrom(FULL_WIDTH_DIGITS(bytes.join(".")), FULL_WIDTH_DIGITS(bytes.join("\uff0e")));
  const high = hex((bytes[0] << 8) | bytes[1]);
  const low = hex((bytes[2] << 8) | bytes[3]);
  const mapped = fc.constantFrom(
    `[::ffff:${bytes.join(".")}]`,
    `[::FFFF:${high}:${low}]`,
    `[0:0:0:0:0:ffff:${high}:${low}]`,
    `[0000:0000:0000:0000:0000:FFFF:${high.padStart(4, "0")}:${low.padStart(4, "0")}]`,
  );
  return fc.oneof(dotted, fullWidth, mapped);
}

/** IPv6 space outside global unicast, or inside it but not for hosts (6to4, Teredo, documentation). */
const NON_PUBLIC_V6 = fc.oneof(
  fc.constant<number[]>([0, 0, 0, 0, 0, 0, 0, 0]),
  fc.tuple(fc.nat({ max: 0x3f }), fc.nat(0xffff)).map(([a, b]) => [0xfe80 | a, 0, 0, 0, 0, 0, b, 1]),
  fc.tuple(fc.nat(0x1ff), fc.nat(0xffff)).map(([a, b]) => [0xfc00 | a, b, 0, 0, 0, 0, 0, 1]),
  fc.tuple(fc.nat(0xff), fc.nat(0xffff)).map(([a, b]) => [0xff00 | a, b, 0, 0, 0, 0, 0, 1]),
  fc.tuple(fc.nat(0xffff), fc.nat(0xffff)).map(([a, b]) => [0x64, 0xff9b, 0, 0, 0, 0, a, b]),
  fc.tuple(fc.nat(0xffff), fc.nat(0xffff)).map(([a, b]) => [0x2001, 0xdb8, a, b, 0, 0, 0, 1]),
  fc.tuple(fc.nat(0xffff), fc.nat(0xffff)).map(([a, b]) => [0x2002, a, b, 0, 0, 0, 0, 1]),
  fc.tuple(fc.nat(0xffff), fc.nat(0xffff)).map(([a, b]) => [0x2001, 0, a, b, 0, 0, 0, 1]),
  fc.tuple(fc.nat(0xffff), fc.nat(0xffff)).map(([a, b]) => [0, 0, 0, 0, 0, 0, a, b | 2]),
  fc.tuple(fc.nat(0xffff)).map(([a]) => [0x100, 0, 0, 0, a, 0, 0, 1]),
);

/** An IPv6 address in brackets: every group written out (zero-padded or not), or its longest zero run compressed; either case. */
function v6Spelling(groups: number[]): fc.Arbitrary<string> {
  const plain = groups.map((g) => g.toString(16));
  const padded = plain.map((g) => g.padStart(4, "0"));
  let start = -1;
  let length = 0;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > length) [start, length] = [i, j - i];
  }
  const compressed =
    length > 1 ? `${plain.slice(0, start).join(":")}::${plain.slice(start + length).join(":")}` : plain.join(":");
  return fc
    .tuple(fc.constantFrom(plain.join(":"), padded.join(":"), compressed), fc.boolean())
    .map(([text, upper]) => `[${upper ? text.toUpperCase() : text}]`);
}

/** A URL around a host: either scheme, any port or none, some path and query. */
const urlAround = (host: fc.Arbitrary<string>) =>
  fc
    .tuple(
      fc.constantFrom("http", "https", "HTTPS"),
      host,
      fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
      fc.constantFrom("/", "/hooks", "/a/b?c=d", ""),
    )
    .map(([scheme, h, port, path]) => `${scheme}://${h}${port === undefined ? "" : `:${port}`}${path}`);

describe("webhook URLs: public http(s) only (domain/urls.ts webhookUrlProblem)", () => {
  it("property: every non-public IPv4 address, in every spelling URL parsing reads, is refused under either setting", () => {
    const address = fc.constantFrom(...NON_PUBLIC_V4).chain(inBlock);
    fc.assert(
      fc.property(urlAround(address.chain(v4Spelling)), (url) => {
        expect(new URL(url).hostname, url).toMatch(ADDRESS);
        expect(webhookUrlProblem(url, PRODUCTION), url).toMatch(REFUSED);
        expect(webhookUrlProblem(url, DEVELOPMENT), url).toMatch(REFUSED);
      }),
      { numRuns: 3000 },
    );
  });

  it("property: every loopback IPv4 address, in every spelling, is refused in production and taken under the development setting", () => {
    fc.assert(
      fc.property(urlAround(inBlock(LOOPBACK_V4).chain(v4Spelling)), (url) => {
        expect(new URL(url).hostname, url).toMatch(ADDRESS);
        expect(webhookUrlProblem(url, PRODUCTION), url).toMatch(/is a loopback address/);
        expect(webhookUrlProblem(url, DEVELOPMENT), url).toBeNull();
      }),
      { numRuns: 1000 },
    );
  });

  it("property: every non-global IPv6 address, in every spelling, is refused under either setting; ::1 is loopback", () => {
    fc.assert(
      fc.property(urlAround(NON_PUBLIC_V6.chain(v6Spelling)), (url) => {
        expect(new URL(url).hostname, url).toMatch(ADDRESS);
        expect(webhookUrlProblem(url, PRODUCTION), url).toMatch(REFUSED);
        expect(webhookUrlProblem(url, DEVELOPMENT), url).toMatch(REFUSED);
      }),
      { numRuns: 2000 },
    );
    for (const host of ["[::1]", "[0:0:0:0:0:0:0:1]", "[0000:0000:0000:0000:0000:0000:0000:0001]"]) {
      expect(webhookUrlProblem(`http://${host}:8080/h`, PRODUCTION), host).toMatch(/is a loopback address/);
      expect(webhookUrlProblem(`http://${host}:8080/h`, DEVELOPMENT), host).toBeNull();
    }
  });

  it("property: a public IPv4 address is taken in every spelling, and so is a public IPv6 address", () => {
    const v4 = fc
      .constantFrom(...PUBLIC_V4)
      .chain(inBlock)
      .chain(v4Spelling);
    const v6 = fc
      .tuple(fc.constantFrom(0x2606, 0x2a00, 0x2001), fc.nat(0xffff), fc.nat(0xffff))
      .map(([a, b, c]) => [a, a === 0x2001 ? 0x4860 : b, c, 0, 0, 0, 0, 0x1111])
      .chain(v6Spelling);
    fc.assert(
      fc.property(urlAround(fc.oneof(v4, v6)), (url) => {
        expect(webhookUrlProblem(url, PRODUCTION), url).toBeNull();
      }),
      { numRuns: 2000 },
    );
  });

  it("names: localhost and names under it are loopback; one-label and internal names are refused; public names are taken", () => {
    for (const host of ["localhost", "LOCALHOST", "localhost.", "api.localhost", "a.b.localhost."]) {
      expect(hostKind(new URL(`http://${host}/`)), host).toBe("loopback");
      expect(webhookUrlProblem(`http://${host}:3000/h`, PRODUCTION), host).toMatch(/is a loopback address/);
      expect(webhookUrlProblem(`http://${host}:3000/h`, DEVELOPMENT), host).toBeNull();
    }
    for (const host of [
      "metadata",
      "redis",
      "deadbeef",
      "metadata.google.internal",
      "printer.local",
      "nas.home.arpa",
      "db.localdomain",
      "intranet.corp",
      "router.lan",
      "x.test",
      "hooks.example",
      "a.invalid",
      "duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion",
    ]) {
      expect(hostKind(new URL(`http://${host}/`)), host).toBe("internal");
      expect(webhookUrlProblem(`https://${host}/h`, DEVELOPMENT), host).toMatch(/private, reserved or internal/);
    }
    // A public name is judged by its name: what it resolves to is the platform's fetch to stop (docs/security.md).
    for (const host of ["hooks.example.com", "api.stripe.com", "xn--n3h.com", "cafe.babe", "127.0.0.1.nip.io"]) {
      expect(webhookUrlProblem(`https://${host}/h`, PRODUCTION), host).toBeNull();
    }
  });

  it("the refusal names the host as URL parsing read it, so an odd spelling shows what it meant", () => {
    expect(webhookUrlProblem("http://0x7f.1:22/", PRODUCTION)).toBe(
      "Webhooks go to public addresses only: 127.0.0.1 is a loopback address or name.",
    );
    expect(webhookUrlProblem("http://0300.0250.0.1/h", DEVELOPMENT)).toBe(
      "Webhooks go to public addresses only: 192.168.0.1 is a private, reserved or internal address or name.",
    );
    expect(webhookUrlProblem("http://[::ffff:169.254.169.254]/latest", DEVELOPMENT)).toBe(
      "Webhooks go to public addresses only: [::ffff:a9fe:a9fe] is a private, reserved or internal address or name.",
    );
  });

  it("the form's other rules stand: absolute http(s), no credentials, at most 2048 characters", () => {
    for (const url of ["ftp://hooks.example.com/x", "javascript:alert(1)", "/relative", "http://", "https://a b.com/"])
      expect(webhookUrlProblem(url, PRODUCTION), url).toBe(
        "The webhook URL must be an absolute http:// or https:// URL.",
      );
    expect(webhookUrlProblem("https://user:pw@hooks.example.com/x", PRODUCTION)).toMatch(/user name or password/);
    expect(webhookUrlProblem(`https://hooks.example.com/${"a".repeat(2048)}`, PRODUCTION)).toMatch(/longer than 2048/);
  });
});
