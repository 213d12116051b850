import { createServer, type Server } from "node:http";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { isAllowedAddress } from "../../../domain/addresses";
import { ByteBudget, downloadSource } from "../../../encoder/source/download";

/** Refused for good: the same source is refused on every attempt. */
const REFUSED = { kind: "source-refused", retryable: false };
/** Worth another attempt: the network or the server may do better next time. */
const DOWNLOAD_FAILED = { kind: "download", retryable: true };

describe("source address policy (docs/security.md, sources)", () => {
  it.each([
    ["8.8.8.8", true],
    ["93.184.216.34", true],
    ["2606:4700::1111", true],
    ["127.0.0.1", false],
    ["127.8.8.8", false],
    ["::1", false],
    ["10.1.2.3", false],
    ["172.16.0.1", false],
    ["192.168.1.1", false],
    ["169.254.169.254", false],
    ["100.64.0.1", false],
    ["0.0.0.0", false],
    ["224.0.0.1", false],
    ["fc00::1", false],
    ["fe80::1", false],
    ["::ffff:127.0.0.1", false],
    ["::ffff:10.0.0.1", false],
    // IPv4-compatible (deprecated), NAT64, 6to4 and Teredo forms of loopback, and unallocated space.
    ["::7f00:1", false],
    ["::a00:1", false],
    ["64:ff9b::7f00:1", false],
    ["2002:7f00:1::", false],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", false],
    ["4000::1", false],
    ["::", false],
    ["not-an-ip", false],
  ])("%s allowed=%s", (address, allowed) => {
    expect(isAllowedAddress(address, { allowLoopback: false })).toBe(allowed);
  });

  it("loopback only with the explicit development setting; never link-local or private", () => {
    expect(isAllowedAddress("127.0.0.1", { allowLoopback: true })).toBe(true);
    expect(isAllowedAddress("::1", { allowLoopback: true })).toBe(true);
    expect(isAllowedAddress("169.254.169.254", { allowLoopback: true })).toBe(false);
    expect(isAllowedAddress("10.0.0.1", { allowLoopback: true })).toBe(false);
  });
});

describe("guarded download", () => {
  let server: Server;
  let base: string;
  let dir: string;
  const payload = Buffer.alloc(256 * 1024, 7);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "guard-"));
    server = createServer((req, res) => {
      const url = new URL(req.url!, "http://x");
      if (url.pathname === "/file") return res.writeHead(200, { "content-length": payload.length }).end(payload);
      if (url.pathname === "/chunked") {
        res.writeHead(200);
        res.write(payload);
        return res.end(payload);
      }
      if (url.pathname === "/redirect") return res.writeHead(302, { location: url.searchParams.get("to")! }).end();
      if (url.pathname === "/missing") return res.writeHead(404).end();
      // Sends the headers and a first chunk, then nothing more: a source that hangs.
      if (url.pathname === "/stall") return res.writeHead(200).write(payload);
      // A byte at a time, forever: never silent long enough for an idle timeout.
      if (url.pathname === "/trickle") {
        res.writeHead(200);
        const timer = setInterval(() => res.write("x"), 50);
        return res.on("close", () => clearInterval(timer));
      }
      // The status line and headers themselves, a byte at a time.
      if (url.pathname === "/trickle-headers") {
        const head = `HTTP/1.1 200 OK\r\nX-Padding: ${"a".repeat(10_000)}\r\n\r\n`;
        let at = 0;
        const timer = setInterval(() => req.socket.write(head[at++ % head.length]), 50);
        return req.socket.on("close", () => clearInterval(timer));
      }
      // Slow but steady: 8 KiB every 100 ms, well above the minimum rate the test sets.
      if (url.pathname === "/steady") {
        res.writeHead(200);
        let sent = 0;
        const timer = setInterval(() => {
          res.write(payload.subarray(sent, sent + 8192));
          sent += 8192;
          if (sent >= 96 * 1024) {
            clearInterval(timer);
            res.end();
          }
        }, 100);
        return res.on("close", () => clearInterval(timer));
      }
      // Promises the whole payload, sends half, and drops the connection.
      if (url.pathname === "/truncated") {
        res.writeHead(200, { "content-length": payload.length });
        return res.write(payload.subarray(0, payload.length / 2), () => res.destroy());
      }
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  });

  const dev = { allowLoopback: true, maxBytes: 10 * 1024 * 1024, timeoutMs: 10_000 };
  const prod = { ...dev, allowLoopback: false };

  it("streams a source to disk when the address is allowed", async () => {
    const dest = join(dir, "ok.bin");
    const result = await downloadSource(`${base}/file`, dest, dev);
    expect(result.bytes).toBe(payload.length);
    expect(await readFile(dest)).toEqual(payload);
  });

  it("refuses 127.0.0.1 and localhost without the development setting", async () => {
    await expect(downloadSource(`${base}/file`, join(dir, "a"), prod)).rejects.toMatchObject(REFUSED);
    const port = new URL(base).port;
    await expect(downloadSource(`http://localhost:${port}/file`, join(dir, "b"), prod)).rejects.toMatchObject(REFUSED);
    await expect(downloadSource(`http://[::ffff:127.0.0.1]:${port}/file`, join(dir, "c"), prod)).rejects.toMatchObject(
      REFUSED,
    );
  });

  it("a source refused before any request leaves no rate watch running (one interval per refused job, for the life of the process)", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    try {
      const watched = { ...dev, minRate: { bytesPerSecond: 1024, windowMs: 30_000 } };
      for (const source of ["file:///etc/passwd", "ftp://media.example.com/a.mp4"]) {
        await expect(downloadSource(source, join(dir, "r"), watched)).rejects.toMatchObject(REFUSED);
      }
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("refuses the cloud metadata address and private addresses before connecting", async () => {
    await expect(downloadSource("http://169.254.169.254/latest/meta-data/", join(dir, "m"), dev)).rejects.toThrow(
      /not a public address/,
    );
    await expect(downloadSource("http://10.0.0.5/video.mp4", join(dir, "p"), dev)).rejects.toMatchObject(REFUSED);
  });

  it("checks every redirect hop: a redirect to a private or metadata address is refused", async () => {
    for (const to of ["http://169.254.169.254/latest/meta-data/", "http://192.168.0.10/x.mp4", "file:///etc/passwd"]) {
      const err = await downloadSource(`${base}/redirect?to=${encodeURIComponent(to)}`, join(dir, "r"), dev).catch(
        (e) => e,
      );
      expect(err, to).toMatchObject(REFUSED);
    }
    const followed = await downloadSource(
      `${base}/redirect?to=${encodeURIComponent(`${base}/file`)}`,
      join(dir, "f"),
      dev,
    );
    expect(followed.bytes).toBe(payload.length);
  });

  it("refuses other schemes and credentials in the URL", async () => {
    for (const url of [
      "ftp://example.com/a.mp4",
      "file:///etc/passwd",
      "data:text/plain,hi",
      "http://user:pw@example.com/a.mp4",
    ]) {
      await expect(downloadSource(url, join(dir, "s"), dev), url).rejects.toMatchObject(REFUSED);
    }
  });

  it("enforces the size cap with or without a Content-Length, leaving no partial file", async () => {
    const small = { ...dev, maxBytes: 100 * 1024 };
    await expect(downloadSource(`${base}/file`, join(dir, "big1"), small)).rejects.toThrow(/limit/);
    const dest = join(dir, "big2");
    await expect(downloadSource(`${base}/chunked`, dest, small)).rejects.toThrow(/limit/);
    await expect(stat(dest)).rejects.toThrow();
  });

  it("downloads that share a budget are held to it together, with or without a Content-Length, leaving no partial file", async () => {
    const shared = { ...dev, together: new ByteBudget(300 * 1024, "these sources together") };
    expect((await downloadSource(`${base}/file`, join(dir, "first"), shared)).bytes).toBe(payload.length);
    const announced = await downloadSource(`${base}/file`, join(dir, "second"), shared).catch((e) => e);
    expect(announced).toMatchObject(REFUSED);
    expect(announced.message).toContain(
      "262144 bytes is over the 45056 bytes left of the 307200-byte limit on these sources together",
    );
    const dest = join(dir, "third");
    const streamed = await downloadSource(`${base}/chunked`, dest, shared).catch((e) => e);
    expect(streamed).toMatchObject(REFUSED);
    expect(streamed.message).toContain("over the 307200-byte limit on these sources together");
    await expect(stat(dest)).rejects.toThrow();
  });

  it("network and HTTP failures are retryable download failures with readable messages", async () => {
    const missing = await downloadSource(`${base}/missing`, join(dir, "n"), dev).catch((e) => e);
    expect(missing).toMatchObject(DOWNLOAD_FAILED);
    expect(missing.message).toBe("Download failed: the source answered HTTP 404");
    const closed = await downloadSource("http://127.0.0.1:9/nothing", join(dir, "c"), dev).catch((e) => e);
    expect(closed).toMatchObject(DOWNLOAD_FAILED);
    expect(closed.message).toBe("Download failed: connection refused");
  });

  it("a connection dropped before the promised length arrived: a retryable reset, no partial file", async () => {
    const dest = join(dir, "truncated");
    const err = await downloadSource(`${base}/truncated`, dest, dev).catch((e) => e);
    expect(err).toMatchObject(DOWNLOAD_FAILED);
    expect(err.message).toBe("Download failed: connection reset");
    await expect(stat(dest)).rejects.toThrow();
  });

  it("a cancelled job's download stops with the job's own reason, leaving no partial file", async () => {
    const dest = join(dir, "cancelled");
    const job = new AbortController();
    const cancelled = new Error("the job is cancelled");
    const downloading = downloadSource(`${base}/stall`, dest, dev, job.signal);
    // Cancelled mid-body: once the first bytes are on disk.
    await vi.waitFor(async () => expect((await stat(dest)).size).toBeGreaterThan(0), { timeout: 10_000, interval: 10 });
    job.abort(cancelled);
    await expect(downloading).rejects.toBe(cancelled);
    await expect(stat(dest)).rejects.toThrow();
  });

  describe("minimum rate", () => {
    const slowest = { ...dev, minRate: { bytesPerSecond: 1024, windowMs: 400 } };

    it("a source that trickles its body a byte at a time is given up after one window, retryably, leaving no partial file", async () => {
      const dest = join(dir, "trickled");
      const err = await downloadSource(`${base}/trickle`, dest, slowest).catch((e) => e);
      expect(err).toMatchObject({ kind: "download", retryable: true });
      expect(err.message).toBe("Download failed: the source sent less than 1 KiB/s for 0.4 s");
      await expect(stat(dest)).rejects.toThrow();
    });

    it("so is one that trickles its status line and headers", async () => {
      const err = await downloadSource(`${base}/trickle-headers`, join(dir, "trickled-head"), slowest).catch((e) => e);
      expect(err).toMatchObject({ kind: "download", retryable: true });
      expect(err.message).toBe("Download failed: the source sent less than 1 KiB/s for 0.4 s");
    });

    it("a slow source above the minimum completes, over several windows", async () => {
      const result = await downloadSource(`${base}/steady`, join(dir, "steady"), slowest);
      expect(result.bytes).toBe(96 * 1024);
      expect(result.seconds).toBeGreaterThan(0.8);
    });
  });

  it("a source that stops sending is given up at the timeout, retryably, leaving no partial file", async () => {
    const dest = join(dir, "stalled");
    const stalled = await downloadSource(`${base}/stall`, dest, { ...dev, timeoutMs: 500 }).catch((e) => e);
    expect(stalled).toMatchObject(DOWNLOAD_FAILED);
    expect(stalled.message).toBe("Download failed: timed out");
    await expect(stat(dest)).rejects.toThrow();
  });
});
