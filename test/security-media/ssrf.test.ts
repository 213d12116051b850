import { readdir } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFixtureServer, type FixtureServer } from "../e2e/fixtures";
import { expectStatus } from "../support/api-client";
import { startE2E, type Client, type E2E } from "../e2e/harness";
import type { Job } from "../../client";
import { fakeDnsEnv } from "../support/fake-dns";
import { qstashSignature } from "../support/qstash-signature";
import { startCanary } from "./servers";

/**
 * The SSRF matrix against the running service: every way of naming an address inside the
 * machine or its network, given as a job's source. Each ends refused, by the API (400) or by
 * the encoder (the job failed at once, not retried: a refusal, not a network failure), with a
 * readable message, and the canary (a server on loopback standing for the internal service)
 * never receives a request.
 */
let prod: E2E;
let dev: E2E;
let canary: Awaited<ReturnType<typeof startCanary>>;
let fixtures: FixtureServer;
let prodClient: Client;
let devClient: Client;

/** Hostile or misconfigured DNS: public-looking names that resolve inside. */
const dns = fakeDnsEnv({
  "canary.test": "127.0.0.1",
  "canary6.test": "::1",
  "mapped.test": "::ffff:127.0.0.1",
  "internal.test": "10.0.0.5",
  "metadata.test": "169.254.169.254",
  "ula.test": "fd00::1",
});

beforeAll(async () => {
  [canary, fixtures] = await Promise.all([startCanary(), startFixtureServer()]);
  // Production settings: loopback refused like any other non-public address.
  prod = await startE2E({ allowLoopbackSources: false, env: dns });
  // Development settings: loopback allowed, so a local server can try redirects.
  dev = await startE2E({ allowLoopbackSources: true, env: dns });
  [prodClient, devClient] = await Promise.all([prod.client(), dev.client()]);
});
afterAll(async () => {
  await prod?.stop();
  await dev?.stop();
  await canary?.stop();
  await fixtures?.stop();
});

const withPort = (url: string) => url.replaceAll("PORT", String(canary.port));

/** The job made from `inputUrl`, once it has ended. */
async function finished(e2e: E2E, c: Client, inputUrl: string) {
  const created = await c.createJob({ inputUrl, preset: "mp4_264_240p" });
  expectStatus(created, 201, inputUrl);
  return e2e.waitFor(c, created.body.id, undefined, 60_000);
}

/** Failed at once and for good, saying why in words, without internals; its work dir gone. */
async function expectRefused(e2e: E2E, job: Job, message: RegExp) {
  expect(job, job.inputUrl).toMatchObject({ status: "failed", retryCount: 0, outputUrl: null });
  expect(job.errorMessage).toMatch(message);
  expect(job.errorMessage).not.toMatch(/\n|\bat \w+ \(|\/tmp\/|node:/);
  await vi.waitFor(async () => expect((await readdir(e2e.workDir)).filter((d) => d.includes(job.id))).toEqual([]));
}

describe.concurrent("addresses inside, as the source itself (production settings)", () => {
  const notPublic = (host: string) =>
    new RegExp(`^Source refused: ${host.replace(/[.[\]]/g, "\\$&")} is not a public address$`);
  const resolvesInside = (name: string) =>
    new RegExp(`^Source refused: ${name.replace(/\./g, "\\.")} resolves to a non-public address$`);

  it.each([
    ["loopback", "http://127.0.0.1:PORT/1", notPublic("127.0.0.1")],
    ["loopback, elsewhere in 127/8", "http://127.8.8.8:PORT/2", notPublic("127.8.8.8")],
    ["localhost", "http://localhost:PORT/3", resolvesInside("localhost")],
    ["LOCALHOST", "http://LOCALHOST:PORT/4", resolvesInside("localhost")],
    ["short form 127.1", "http://127.1:PORT/5", notPublic("127.0.0.1")],
    ["decimal 2130706433", "http://2130706433:PORT/6", notPublic("127.0.0.1")],
    ["hex 0x7f.1", "http://0x7f.1:PORT/7", notPublic("127.0.0.1")],
    ["hex 0x7f000001", "http://0x7f000001:PORT/8", notPublic("127.0.0.1")],
    ["octal 017700000001", "http://017700000001:PORT/9", notPublic("127.0.0.1")],
    ["octal 0177.0.0.1", "http://0177.0.0.1:PORT/10", notPublic("127.0.0.1")],
    ["full-width digits", "http://１２７.０.０.１:PORT/11", notPublic("127.0.0.1")],
    ["IPv6 loopback", "http://[::1]:PORT/12", notPublic("::1")],
    ["IPv4-mapped IPv6", "http://[::ffff:127.0.0.1]:PORT/13", notPublic("::ffff:7f00:1")],
    ["IPv4-mapped IPv6, spelled out", "http://[0:0:0:0:0:ffff:7f00:1]:PORT/14", notPublic("::ffff:7f00:1")],
    ["a name DNS resolves to 127.0.0.1", "http://canary.test:PORT/20", resolvesInside("canary.test")],
    ["a name DNS resolves to ::1", "http://canary6.test:PORT/21", resolvesInside("canary6.test")],
    ["a name DNS resolves to ::ffff:127.0.0.1", "http://mapped.test:PORT/22", resolvesInside("mapped.test")],
  ])("%s (%s): refused by the encoder; the canary is never reached", async (_name, url, message) => {
    const job = await finished(prod, prodClient, withPort(url));
    await expectRefused(prod, job, message);
    const path = new URL(withPort(url)).pathname;
    expect(canary.hits().filter((hit) => hit === path)).toEqual([]);
  });

  it.each([
    ["a name DNS resolves to 10.0.0.5", "http://internal.test/a.mp4", resolvesInside("internal.test")],
    [
      "a name DNS resolves to cloud metadata",
      "http://metadata.test/latest/meta-data/",
      resolvesInside("metadata.test"),
    ],
    ["a name DNS resolves to fd00::1", "http://ula.test/a.mp4", resolvesInside("ula.test")],
  ])("private and reserved: %s (%s) is refused before any connection", async (_name, url, message) => {
    await expectRefused(prod, await finished(prod, prodClient, url), message);
  });

  // An address no deployment fetches from, written as the host itself: the API refuses it, so it
  // takes no unit. (Loopback is the encoder's call, above: a local deployment serves sources there.)
  it.each([
    ["IPv4-compatible IPv6", "http://[::127.0.0.1]:PORT/15"],
    ["NAT64", "http://[64:ff9b::7f00:1]:PORT/16"],
    ["0.0.0.0 (this host on Linux)", "http://0.0.0.0:PORT/17"],
    ["0 (0.0.0.0)", "http://0:PORT/18"],
    ["[::] (this host on Linux)", "http://[::]:PORT/19"],
    ["10/8", "http://10.0.0.5/a.mp4"],
    ["172.16/12", "http://172.16.0.1/a.mp4"],
    ["192.168/16", "http://192.168.1.1/a.mp4"],
    ["carrier-grade NAT", "http://100.64.0.1/a.mp4"],
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/iam/security-credentials/"],
    ["cloud metadata in hex", "http://0xa9fea9fe/latest/meta-data/"],
    ["10.0.0.1 in decimal", "http://167772161/a.mp4"],
    ["cloud metadata, IPv4-mapped", "http://[::ffff:a9fe:a9fe]/latest/meta-data/"],
    ["IPv6 unique-local", "http://[fd00::1]/a.mp4"],
    ["IPv6 link-local", "http://[fe80::1]/a.mp4"],
    ["6to4 of 10.0.0.1", "http://[2002:a00:1::]/a.mp4"],
    ["multicast", "http://224.0.0.1/a.mp4"],
    ["broadcast", "http://255.255.255.255/a.mp4"],
    ["benchmarking range", "http://198.18.0.1/a.mp4"],
    ["documentation range", "http://[2001:db8::1]/a.mp4"],
  ])("a private or reserved address as the host: %s (%s) is a 400 at creation", async (_name, url) => {
    const created = await prodClient.createJob({ inputUrl: withPort(url), preset: "mp4_264_240p" });
    expectStatus(created, 400);
    expect(created.body).toMatchObject({
      error: "Validation error",
      details: [{ field: "inputUrl", message: "Invalid input URL" }],
    });
  });

  it.each([
    ["file:///etc/passwd"],
    ["gopher://127.0.0.1:PORT/_GET%20/"],
    ["ftp://127.0.0.1:PORT/a.mp4"],
    ["dict://127.0.0.1:PORT/info"],
    ["ldap://127.0.0.1:PORT/"],
    ["data:video/mp4;base64,AAAAIGZ0eXA="],
    ["javascript:alert(1)"],
    ["//127.0.0.1:PORT/scheme-relative.mp4"],
    ["http://[fe80::1%25lo]:PORT/zone-id.mp4"],
    // Credentials, and a host hidden after them: the encoder would refuse them (it does, after a redirect).
    ["http://user:secret@127.0.0.1:PORT/23"],
    ["http://127.0.0.1:PORT@canary.test:PORT/24"],
  ])("not an http(s) URL the service fetches: %s is a 400 at creation", async (url) => {
    const created = await prodClient.createJob({ inputUrl: withPort(url), preset: "mp4_264_240p" });
    expectStatus(created, 400);
    expect(created.body).toMatchObject({
      error: "Validation error",
      details: [{ field: "inputUrl", message: "Invalid input URL" }],
    });
  });
});

describe.concurrent("redirects from a public source to inside (development settings: the redirector is on loopback)", () => {
  const redirect = (to: string) => fixtures.url(`redirect?to=${encodeURIComponent(withPort(to))}`);

  it.each([
    ["a private address", "http://10.1.2.3/internal.mp4", /^Source refused: 10\.1\.2\.3 is not a public address$/],
    [
      "cloud metadata",
      "http://169.254.169.254/latest/meta-data/",
      /^Source refused: 169\.254\.169\.254 is not a public address$/,
    ],
    [
      "cloud metadata, IPv4-mapped",
      "http://[::ffff:a9fe:a9fe]/",
      /^Source refused: ::ffff:a9fe:a9fe is not a public address$/,
    ],
    [
      "0.0.0.0, which reaches this host",
      "http://0.0.0.0:PORT/r1",
      /^Source refused: 0\.0\.0\.0 is not a public address$/,
    ],
    ["[::], which reaches this host", "http://[::]:PORT/r2", /^Source refused: :: is not a public address$/],
    [
      "a name DNS resolves inside",
      "http://internal.test/r3",
      /^Source refused: internal\.test resolves to a non-public address$/,
    ],
    [
      "credentials (the canary, allowed here, would answer)",
      "http://user:pw@127.0.0.1:PORT/r4",
      /^Source refused: credentials in the URL are not accepted$/,
    ],
    ["a file", "file:///etc/passwd", /^Source refused: only http and https URLs are fetched \(got file:\)$/],
    ["gopher", "gopher://127.0.0.1:PORT/_r5", /^Source refused: only http and https URLs are fetched \(got gopher:\)$/],
    ["a scheme-relative private address", "//10.0.0.5/r6", /^Source refused: 10\.0\.0\.5 is not a public address$/],
  ])("to %s: refused at that hop", async (_name, to, message) => {
    await expectRefused(dev, await finished(dev, devClient, redirect(to)), message);
  });
});

describe("the canary", () => {
  it("received no request from either stack, directly or through a redirect", () => {
    expect(fixtures.hits("/redirect")).toBeGreaterThanOrEqual(10);
    expect(canary.hits()).toEqual([]);
  });
});

describe("encoder deliveries: only QStash-signed requests are accepted", () => {
  it("refuses unsigned, forged, altered and misdirected deliveries", async () => {
    const { randomUUID } = await import("node:crypto");
    const url = `${prod.stack.info.encoderUrl}/deliveries/jobs`;
    const body = JSON.stringify({ jobId: randomUUID(), dispatch: 0 });
    const sign = (key: string, signedBody: string) => qstashSignature(key, url, signedBody);
    const post = (headers: Record<string, string>) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

    expect((await post({})).status).toBe(401);
    expect((await post({ "Upstash-Signature": await sign("not-the-signing-key", body) })).status).toBe(401);
    const key = prod.stack.info.cloud.qstash.currentSigningKey;
    expect(
      (await post({ "Upstash-Signature": await sign(key, JSON.stringify({ jobId: randomUUID(), dispatch: 0 })) }))
        .status,
    ).toBe(401);
    // Signed by QStash with the right key, but for the Worker's webhook route: replayed here, refused.
    const forTheWorker = await qstashSignature(key, `${prod.stack.info.apiUrl}/internal/webhook-deliveries`, body);
    expect((await post({ "Upstash-Signature": forTheWorker })).status).toBe(401);
    // Correctly signed, for a job that does not exist: accepted and settled without work.
    expect((await post({ "Upstash-Signature": await sign(key, body) })).status).toBe(200);
  });
});
