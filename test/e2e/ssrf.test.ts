import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { startE2E, type E2E } from "./harness";

/** Production settings: loopback sources are refused like any other non-public address. */
let prod: E2E;
/** Development settings: loopback allowed, so a local server can try the other tricks. */
let dev: E2E;
let fixtures: FixtureServer;

beforeAll(async () => {
  [prod, fixtures] = await Promise.all([startE2E({ allowLoopbackSources: false }), startFixtureServer()]);
  dev = await startE2E({ allowLoopbackSources: true });
  await fixtures.source("ok.mp4", { seconds: 2, width: 320, height: 180 });
});
afterAll(async () => {
  await prod?.stop();
  await dev?.stop();
  await fixtures?.stop();
});

async function failedJob(e2e: E2E, inputUrl: string) {
  const c = await e2e.client();
  const created = await c.call("POST", "/jobs", { inputUrl, preset: "mp4_264_240p" });
  expect(created.status).toBe(201);
  return e2e.waitFor(c, created.body.id);
}

describe("source guard (architecture: sources), end to end", () => {
  it("127.0.0.1 without the development setting: refused, not retried, nothing fetched", async () => {
    const job = await failedJob(prod, fixtures.url("ok.mp4"));
    expect(job).toMatchObject({ status: "failed", retryCount: 0 });
    expect(job.errorMessage).toMatch(/^Source refused/);
    expect(fixtures.hits("/ok.mp4")).toBe(0);
  });

  it("the cloud metadata address is refused even where loopback is allowed", async () => {
    const job = await failedJob(dev, "http://169.254.169.254/latest/meta-data/iam/security-credentials/");
    expect(job).toMatchObject({ status: "failed", retryCount: 0 });
    expect(job.errorMessage).toMatch(/^Source refused/);
  });

  it("a redirect to a private address is refused at that hop", async () => {
    const job = await failedJob(dev, fixtures.url(`redirect?to=${encodeURIComponent("http://10.1.2.3/internal.mp4")}`));
    expect(job).toMatchObject({ status: "failed", retryCount: 0 });
    expect(job.errorMessage).toMatch(/^Source refused/);
    expect(fixtures.hits("/redirect")).toBe(1);
  });

  it("an HLS playlist that references a local file is refused before FFmpeg reads it", async () => {
    const playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n";
    const job = await failedJob(dev, await fixtures.file("trap.m3u8", playlist));
    expect(job).toMatchObject({ status: "failed", retryCount: 0 });
    expect(job.errorMessage).toMatch(/playlist/i);
    expect(job.errorMessage).not.toMatch(/root:/);
  });

  it("the same playlist disguised as .mp4 is refused too (judged by content, not name)", async () => {
    const playlist = "#EXTM3U\n#EXTINF:10,\n/etc/passwd\n";
    const job = await failedJob(dev, await fixtures.file("disguised.mp4", playlist));
    expect(job.status).toBe("failed");
    expect(job.errorMessage).toMatch(/playlist/i);
  });
});

describe("encoder deliveries: only QStash-signed requests are accepted", () => {
  it("refuses unsigned, forged and altered deliveries", async () => {
    const { SignJWT } = await import("jose");
    const { createHash, randomUUID } = await import("node:crypto");
    const url = `${prod.stack.info.encoderUrl}/deliveries/jobs`;
    const body = JSON.stringify({ jobId: randomUUID() });
    const sign = (key: string, signedBody: string) =>
      new SignJWT({ body: createHash("sha256").update(signedBody).digest("base64url") })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuer("Upstash")
        .setSubject(url)
        .setIssuedAt()
        .setNotBefore("0s")
        .setExpirationTime("5m")
        .sign(new TextEncoder().encode(key));
    const post = (headers: Record<string, string>) => fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

    expect((await post({})).status).toBe(401);
    expect((await post({ "Upstash-Signature": await sign("not-the-signing-key", body) })).status).toBe(401);
    const key = prod.stack.info.cloud.qstash.currentSigningKey;
    expect((await post({ "Upstash-Signature": await sign(key, JSON.stringify({ jobId: randomUUID() })) })).status).toBe(401);
    // Correctly signed, for a job that does not exist: accepted and settled without work.
    expect((await post({ "Upstash-Signature": await sign(key, body) })).status).toBe(200);
  });
});
