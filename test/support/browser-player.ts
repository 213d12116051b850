import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { type Browser, chromium, type Page } from "playwright-core";

/**
 * A player page in headless Chromium, served from a loopback origin of its own, so a playback
 * link on another origin is fetched as a browser fetches it (CORS and all): hls.js for an HLS
 * link, dash.js for an MPD, both in their published builds. `window.player` reports what the
 * page saw: its time, whether it ended, the first fatal error, and how far the stream reached.
 */
const require = createRequire(import.meta.url);
const SCRIPTS: Record<string, string> = {
  "/hls.js": require.resolve("hls.js/dist/hls.min.js"),
  // The package exports its UMD build as its `require` entry.
  "/dash.js": require.resolve("dashjs"),
};

const PAGE = `<!doctype html><video id="v" muted playsinline></video>
<script src="/hls.js"></script><script src="/dash.js"></script><script>
  const video = document.getElementById("v");
  const state = { fatal: null, ended: false, started: false, times: [], duration: null, levels: null };
  window.player = state;
  video.addEventListener("ended", () => { state.ended = true; });
  video.addEventListener("playing", () => { state.started = true; });
  video.addEventListener("timeupdate", () => { state.times.push(video.currentTime); state.duration = video.duration; });
  const params = new URL(location.href).searchParams;
  const url = params.get("src");
  const rate = Number(params.get("rate") ?? 1);
  video.addEventListener("playing", () => { video.playbackRate = rate; });
  if (url.includes(".mpd")) {
    const dash = dashjs.MediaPlayer().create();
    dash.on(dashjs.MediaPlayer.events.ERROR, (e) => { state.fatal = JSON.stringify(e.error ?? e); });
    dash.initialize(video, url, true);
  } else {
    const hls = new Hls({ startPosition: 0 });
    hls.on(Hls.Events.ERROR, (_e, data) => { if (data.fatal) state.fatal = data.details; });
    hls.on(Hls.Events.MANIFEST_PARSED, (_e, data) => { state.levels = data.levels.length; video.play(); });
    hls.loadSource(url);
    hls.attachMedia(video);
  }
</script>`;

interface PlayerState {
  fatal: string | null;
  ended: boolean;
  started: boolean;
  /** Every currentTime a timeupdate reported, in order. */
  times: number[];
  duration: number | null;
  levels: number | null;
}

export interface BrowserPlayer {
  /** A new page playing `url`, at `rate` times real time once it plays. */
  play(url: string, rate?: number): Promise<Page>;
  state(page: Page): Promise<PlayerState>;
  stop(): Promise<void>;
}

const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--autoplay-policy=no-user-gesture-required",
];

export async function startBrowserPlayer(): Promise<BrowserPlayer> {
  const server: Server = createServer(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://page").pathname;
    if (path === "/") return res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    const script = SCRIPTS[path];
    if (!script) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/javascript" }).end(await readFile(script));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const browser: Browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: CHROMIUM_ARGS,
  });
  return {
    async play(url, rate = 1) {
      const page = await browser.newPage();
      await page.goto(`${origin}/?src=${encodeURIComponent(url)}&rate=${rate}`);
      return page;
    },
    state: (page) => page.evaluate(() => (window as unknown as { player: PlayerState }).player),
    async stop() {
      await browser.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
