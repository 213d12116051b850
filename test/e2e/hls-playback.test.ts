import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { extname, join } from "node:path";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extract, readZip } from "../support/outputs";
import { expectStatus } from "../support/api-client";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { startE2E, type E2E } from "./harness";

/** What the test page's script sets on window: hls.js's fatal error, if any, and the variants it found. */
type PlayerWindow = Window & { fatal?: string; levels?: number };

const hlsJs = createRequire(import.meta.url).resolve("hls.js/dist/hls.min.js");
const TYPES: Record<string, string> = {
  ".m3u8": "application/vnd.apple.mpegurl",
  ".ts": "video/mp2t",
  ".js": "text/javascript",
  ".html": "text/html",
};

const PAGE = `<!doctype html><video id="v" muted playsinline></video><script src="/hls.js"></script><script>
  const video = document.getElementById("v");
  const hls = new Hls();
  hls.on(Hls.Events.ERROR, (_e, data) => { if (data.fatal) window.fatal = data.details; });
  hls.loadSource("/media/master.m3u8");
  hls.attachMedia(video);
  hls.on(Hls.Events.MANIFEST_PARSED, (_e, data) => { window.levels = data.levels.length; video.play(); });
</script>`;

let e2e: E2E;
let fixtures: FixtureServer;
let server: Server;

function serve(mediaDir: string): Promise<string> {
  server = createServer(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://page").pathname;
    if (path === "/") return res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    const file = path === "/hls.js" ? hlsJs : join(mediaDir, path.replace(/^\/media\//, "").replace(/\.\./g, ""));
    try {
      await stat(file);
      res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
      createReadStream(file).pipe(res);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}/`)),
  );
}

beforeAll(async () => {
  [e2e, fixtures] = await Promise.all([startE2E({ allowLoopbackSources: true }), startFixtureServer()]);
});
afterAll(async () => {
  server?.close();
  await e2e?.stop();
  await fixtures?.stop();
});

describe("HLS output plays in a browser", () => {
  it("hls_abr_264_basic: headless Chromium with hls.js starts playback and advances", async () => {
    const src = await fixtures.source("play.mp4", { seconds: 12, width: 1280, height: 720 });
    const c = await e2e.client("free");
    const created = await c.createJob({ inputUrl: src, preset: "hls_abr_264_basic" });
    expectStatus(created, 201);
    const job = await e2e.waitFor(c, created.body.id);
    expect(job.status).toBe("completed");
    const dir = await extract(await readZip(Buffer.from(await (await fetch(job.outputUrl!)).arrayBuffer())));
    const url = await serve(dir);

    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--autoplay-policy=no-user-gesture-required",
      ],
    });
    try {
      const page = await browser.newPage();
      await page.goto(url);
      await page.waitForFunction(
        () => (document.getElementById("v") as HTMLVideoElement).currentTime > 2 || (window as PlayerWindow).fatal,
        undefined,
        { timeout: 30_000 },
      );
      const state = await page.evaluate(() => ({
        time: (document.getElementById("v") as HTMLVideoElement).currentTime,
        fatal: (window as PlayerWindow).fatal ?? null,
        levels: (window as PlayerWindow).levels,
      }));
      expect(state.fatal).toBeNull();
      expect(state.time).toBeGreaterThan(2);
      expect(state.levels).toBeGreaterThanOrEqual(2);
    } finally {
      await browser.close();
    }
  });
});
