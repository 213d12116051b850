import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { mkdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVepClient } from "../../client";
import { PROJECT_ROOT } from "../../dev/state";
import { users } from "../../drizzle/schema";
import { byteAt, heldOrigin } from "../support/held-origin";
import { ffmpeg, ffprobeJson, makeSource } from "../support/media";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { startE2E, type E2E } from "./harness";

/** Screenshots of each step, kept for people to look at (gitignored). */
const ARTIFACTS = join(PROJECT_ROOT, "test-artifacts", "dashboard");

let e2e: E2E;
let fixtures: FixtureServer;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Anything the page logged as an error, including Content-Security-Policy refusals. */
const pageErrors: string[] = [];

/** A mark set on the page's window: still there later, the page was never reloaded. */
type MarkedWindow = Window & { sameDocument?: boolean; firstPlayer?: Element | null };
/** The upload's progress bar's values, as a page script sampled them. */
type ProgressWindow = Window & { progressSeen?: number[] };

const email = `browser-${Date.now()}@example.com`;
const password = "a password for the browser test";

async function shot(name: string) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** The API called as a developer's program would: the project's client with the key the dashboard made. */
const vep = (apiKey: string) => createVepClient({ baseUrl: e2e.stack.info.apiUrl, apiKey });

const encoderLines: string[] = [];

beforeAll(async () => {
  await mkdir(ARTIFACTS, { recursive: true });
  [e2e, fixtures, receiver] = await Promise.all([
    // The 8 s clip splits into parts (docs/scaling.md), a single file's and a stream's alike, so
    // the page plays outputs made in parts.
    startE2E({
      allowLoopbackSources: true,
      env: { SPLIT_MIN_SECONDS: "4", STREAM_SPLIT_MIN_SECONDS: "4", SPLIT_PART_SECONDS: "2" },
      log: (source, line) => source === "encoder" && encoderLines.push(line),
    }),
    startFixtureServer(),
    startWebhookReceiver(),
  ]);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: [
      "--headless",
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
  context = await browser.newContext({
    baseURL: e2e.stack.info.apiUrl,
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    // The address the sign-up throttle counts (Cloudflare sets it in production): one per run, as
    // the counters live in the machine's Redis beyond this stack.
    extraHTTPHeaders: {
      "CF-Connecting-IP": `2001:db8:${randomBytes(4).toString("hex").match(/.{4}/g)!.join(":")}:1::1`,
    },
  });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: e2e.stack.info.apiUrl });
  page = await context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error") pageErrors.push(m.text());
  });
  page.on("pageerror", (err) => pageErrors.push(String(err)));
  page.on("response", (res) => {
    if (res.status() >= 400) pageErrors.push(`${res.status()} ${res.url()}`);
  });
});

afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await fixtures?.stop();
  await e2e?.stop();
});

/**
 * Waits until the page's player is past `seconds` (or says it failed); a player that stalls
 * fails the test with where it stood.
 */
async function playsPast(seconds: number, timeout: number, label = "the player") {
  try {
    await page.waitForFunction(
      (past) => {
        const video = document.getElementById("player") as HTMLVideoElement;
        return video.currentTime > past || video.dataset.error !== undefined;
      },
      seconds,
      { timeout },
    );
  } catch (err) {
    const at = await page.evaluate(() => {
      const video = document.getElementById("player") as HTMLVideoElement | null;
      if (!video) return "no player on the page";
      const buffered = Array.from(
        { length: video.buffered.length },
        (_, i) => `${video.buffered.start(i).toFixed(2)}-${video.buffered.end(i).toFixed(2)}`,
      );
      return `at ${video.currentTime.toFixed(2)} s, paused ${video.paused}, readyState ${video.readyState}, networkState ${video.networkState}, buffered [${buffered.join(", ")}], duration ${video.duration}`;
    });
    throw new Error(`${label} did not play past ${seconds} s within ${timeout} ms: ${at}`, { cause: err });
  }
}

/** The job's page, its player started muted until 1.5 s have played (or it reports an error): what it shows then. */
async function played(jobId: string) {
  await page.goto(`/dashboard/jobs/${jobId}`);
  await page.evaluate(() => {
    const video = document.getElementById("player") as HTMLVideoElement;
    video.muted = true;
    return video.play().catch(() => undefined);
  });
  await playsPast(1.5, 30_000);
  return page.evaluate(() => {
    const video = document.getElementById("player") as HTMLVideoElement;
    return {
      time: video.currentTime,
      error: video.dataset.error ?? null,
      levels: video.dataset.levels ?? null,
      width: video.videoWidth,
      length: video.duration,
    };
  });
}

/** Steps run in order on one signed-in browser, as a new user would go. */
describe("the dashboard in headless Chromium", () => {
  let apiKey: string;
  let mp4Job: string;
  let hlsJob: string;

  it("signs up from the sign-in page, is sent back to sign in, and lands on the overview", async () => {
    await page.goto("/dashboard");
    expect(new URL(page.url()).pathname).toBe("/dashboard/signin");
    await page.click("text=Sign up");
    await page.fill('input[name="email"]', email);
    await page.fill('input[name="password"]', password);
    await shot("01-sign-up");
    await page.click('button:has-text("Create account")');
    await page.waitForURL("**/dashboard/signin?from=signup");
    await expect(page.textContent(".notice.info")).resolves.toContain("If that email was new, your account is ready");
    await page.fill('input[name="email"]', email);
    await page.fill('input[name="password"]', password);
    await page.click('button:has-text("Sign in")');
    await page.waitForURL("**/dashboard");
    await expect(page.textContent("[data-testid=usage-text]")).resolves.toContain("0 of 10 jobs used");
    await shot("02-overview");
  });

  it("creates a named key, shown whole once with a working copy button", async () => {
    await page.click("nav >> text=API keys");
    await page.fill('input[name="name"]', "browser test");
    await page.click('button:has-text("Create key")');
    apiKey = (await page.textContent("#new-key"))!.trim();
    expect(apiKey).toMatch(/^spk_[A-Za-z0-9]{43}$/);
    await page.click('button[data-copy="#new-key"]');
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(apiKey);
    await shot("03-key-created");
    await page.click("text=Done");
    const listed = await page.textContent("#keys");
    expect(listed).toContain(`…${apiKey.slice(-4)}`);
    expect(listed).not.toContain(apiKey);
  });

  it("jobs submitted with the key appear and complete in the list without a reload", async () => {
    const clip = await fixtures.source("dashboard-clip.mp4", { seconds: 8, width: 854, height: 480 });
    const mp4 = await vep(apiKey).createJob({ inputUrl: clip, preset: "mp4_264_480p" });
    const hls = await vep(apiKey).createJob({ inputUrl: clip, preset: "hls_abr_264_basic" });
    expect([mp4.status, hls.status]).toEqual(["queued", "queued"]);
    [mp4Job, hlsJob] = [mp4.id, hls.id];

    await page.click("nav >> text=Jobs");
    await page.waitForSelector(`tr[data-job-id="${mp4Job}"]`);
    await shot("04-jobs-running");
    await page.evaluate(() => ((window as MarkedWindow).sameDocument = true));
    for (const id of [mp4Job, hlsJob]) {
      await page.waitForSelector(`tr[data-job-id="${id}"][data-status="completed"]`, { timeout: 240_000 });
    }
    expect(await page.evaluate(() => (window as MarkedWindow).sameDocument)).toBe(true);
    const row = await page.textContent(`tr[data-job-id="${mp4Job}"]`);
    for (const id of [mp4Job, hlsJob]) {
      expect(
        encoderLines.some((line) => line.startsWith(`job ${id}  split `)),
        `job ${id} was split: ${encoderLines.filter((l) => l.includes(id)).join("\n")}`,
      ).toBe(true);
    }
    expect(row).toMatch(/mp4_264_480p/);
    expect(row).toMatch(/0:08/);
    expect(row).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC.*\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);

    // Thumbnails: the MP4's first frames, the HLS ladder's lowest level, decoded in the page.
    await page.waitForFunction(
      (ids) =>
        ids.every(
          (id) =>
            (document.querySelector(`tr[data-job-id="${id}"] video.thumb`) as HTMLVideoElement | null)?.videoWidth,
        ),
      [mp4Job, hlsJob],
      { timeout: 30_000 },
    );
    await shot("05-jobs-completed");
  });

  it("downloads the output: the same bytes the API's signed link serves", async () => {
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.click(`tr[data-job-id="${mp4Job}"] >> text=Download`),
    ]);
    expect(download.suggestedFilename()).toBe("mp4_264_480p.mp4");
    const saved = await readFile((await download.path())!);
    const viaApi = await vep(apiKey).getJob(mp4Job);
    const original = Buffer.from(await (await fetch(viaApi.outputUrl!)).arrayBuffer());
    expect(saved.length).toBeGreaterThan(10_000);
    expect(saved.equals(original)).toBe(true);
  });

  it("plays the MP4 output and the HLS output, both encoded in parts (hls.js, through the stream's playback link), in the page", async () => {
    for (const [id, name] of [
      [mp4Job, "06-play-mp4"],
      [hlsJob, "07-play-hls"],
    ]) {
      const state = await played(id);
      expect(state.error, id).toBeNull();
      expect(state.time).toBeGreaterThan(1.5);
      expect(state.width).toBeGreaterThan(0);
      if (id === hlsJob) {
        expect(Number(state.levels)).toBeGreaterThanOrEqual(2);
        expect(await page.getAttribute("#player", "data-hls-src")).toMatch(new RegExp(`^/play/${id}/`));
      }
      await shot(name);
    }
  });

  it("plays a version 1.1 timeline's render (a fade, a wipe, a filter, a freeze, captions) in the page", async () => {
    const clip = await fixtures.source("dashboard-timeline.mp4", { seconds: 3, width: 640, height: 360 });
    const created = await vep(apiKey).createEdlJob({
      edl: {
        version: "1.1",
        output: { resolution: "640x360", fps: 30 },
        timeline: {
          tracks: [
            {
              type: "video",
              clips: [
                {
                  id: "a",
                  src: clip,
                  in: 0,
                  out: 3,
                  startTime: 0,
                  transition: { in: { type: "fade", duration: 0.5 } },
                },
                {
                  id: "b",
                  src: clip,
                  in: 0,
                  out: 3,
                  startTime: 2,
                  transition: { in: { type: "wipeLeft", duration: 1 } },
                  filters: ["sepia"],
                  freeze: { at: 1, duration: 0.5 },
                },
              ],
            },
            { type: "caption", clips: [{ id: "subs", cues: [{ start: 0.5, end: 3, text: "Timeline 1.1" }] }] },
          ],
        },
      },
    });
    await page.goto("/dashboard/jobs");
    await page.waitForSelector(`tr[data-job-id="${created.id}"][data-status="completed"]`, { timeout: 240_000 });
    const state = await played(created.id);
    expect(state.error).toBeNull();
    expect(state.time).toBeGreaterThan(1.5);
    expect(state.width).toBe(640);
    // 3 + 3 − 1 s of overlap + 0.5 s of freeze.
    expect(state.length).toBeCloseTo(5.5, 1);
    await shot("07b-play-timeline-1-1");
  });

  it("plays a stream on its job's page from the start while it encodes, the progress following, and on through its end (hls.js, dash.js)", async () => {
    const [{ accountId }] = await e2e.admin.db.select().from(users).where(eq(users.email, email));
    await e2e.admin.setPlan(accountId, "enterprise");
    // Under the stack's split threshold, so one FFmpeg run reads it by ranges as it arrives.
    const file = join(fixtures.dir, "stream-source.mp4");
    await makeSource(file, { seconds: 3.9, width: 854, height: 480 });
    const heldFrom = await byteAt(file, 3.5);
    for (const [preset, attribute, name] of [
      ["live_hls_264_lowlatency", "data-hls-src", "07c-stream-hls"],
      ["live_dash_264_lowlatency", "data-dash-src", "07d-stream-dash"],
    ]) {
      // The encode makes the stream's first seconds, then waits for the rest of its source.
      const origin = await heldOrigin(file, heldFrom);
      // dash.js loads once its player is on the page: held until the play below is asked for, a
      // play asked for before the player is ready still plays.
      let playAsked = () => {};
      const asked = new Promise<void>((resolve) => (playAsked = resolve));
      await page.route("**/dash.all.min.js", async (route) => {
        await asked;
        await route.continue();
      });
      try {
        const job = await vep(apiKey).createJob({ inputUrl: origin.url, preset });
        await page.goto(`/dashboard/jobs/${job.id}`);
        await page.evaluate(() => ((window as MarkedWindow).sameDocument = true));
        // The page refreshes itself into the player once the stream plays.
        const player = await page.waitForSelector(`video#player[${attribute}]`, { timeout: 120_000 });
        expect(await player.getAttribute(attribute)).toMatch(
          new RegExp(`^/play/${job.id}/[^/]+/(master.m3u8|manifest.mpd)$`),
        );
        await page.evaluate(() => {
          const video = document.getElementById("player") as HTMLVideoElement;
          (window as MarkedWindow).firstPlayer = video;
          video.muted = true;
          video.play().catch(() => undefined);
        });
        playAsked();
        await playsPast(1.5, 60_000, preset);
        const playing = await page.evaluate(() => {
          const video = document.getElementById("player") as HTMLVideoElement;
          return { error: video.dataset.error ?? null, width: video.videoWidth, levels: video.dataset.levels ?? null };
        });
        expect(playing.error, preset).toBeNull();
        expect(playing.width, preset).toBeGreaterThan(0);
        expect(Number(playing.levels), preset).toBeGreaterThanOrEqual(2);
        // Played while the job is still encoding: its source is still held.
        const during = await vep(apiKey).getJob(job.id);
        expect(during).toMatchObject({
          status: "processing",
          playbackUrl: expect.stringContaining(`/play/${job.id}/`),
        });
        await expect(page.textContent("#job .status")).resolves.toBe("processing");
        await expect(page.getAttribute("#job progress", "max")).resolves.toBe("1");
        // The link the API gives, signed afresh for each refresh of the page.
        const shown = new URL((await page.textContent("#playback-link")) ?? "");
        expect(shown.origin).toBe(e2e.stack.info.apiUrl);
        expect(shown.pathname.replace(/\/\d+\.[\w-]{43}\//, "/")).toBe(
          new URL(during.playbackUrl!).pathname.replace(/\/\d+\.[\w-]{43}\//, "/"),
        );
        await shot(name);

        origin.release();
        await page.waitForSelector('#job[data-active="false"]', { timeout: 120_000 });
        await expect(page.textContent("#job .status")).resolves.toBe("completed");
        expect(await page.isVisible("text=Download")).toBe(true);
        // No reload, and the player that was playing is the page's player still.
        expect(await page.evaluate(() => (window as MarkedWindow).sameDocument)).toBe(true);
        expect(
          await page.evaluate(() => (window as MarkedWindow).firstPlayer === document.getElementById("player")),
        ).toBe(true);
        // It plays on into the last segment, made only once the source was released.
        await playsPast(3.2, 60_000, preset);
        expect(await page.evaluate(() => document.getElementById("player")?.dataset.error ?? null), preset).toBeNull();
      } finally {
        playAsked();
        await page.unrouteAll();
        await origin.stop();
      }
    }
    await page.goto("/dashboard/jobs");
  });

  it("revokes the key after confirming; the API then refuses it with 401", async () => {
    await expect(vep(apiKey).listJobs()).resolves.toMatchObject({ jobs: expect.any(Array) });
    await page.goto("/dashboard/keys");
    await page.click(`tr:has-text("browser test") >> text=Revoke…`);
    await shot("08-revoke-confirm");
    await page.click('button:has-text("Revoke key")');
    await expect(page.textContent(".notice.ok")).resolves.toContain(`Key …${apiKey.slice(-4)} revoked.`);
    await shot("09-key-revoked");
    await expect(vep(apiKey).listJobs()).rejects.toMatchObject({ status: 401, error: "Unauthorized" });
  });

  it("sets a webhook, reveals and rotates its secret, and a test event verifies only with the new one", async () => {
    await page.click("nav >> text=Webhook");
    await page.fill('input[name="url"]', receiver.url);
    await page.click('button:has-text("Save")');
    await expect(page.textContent(".notice.ok")).resolves.toContain("Webhook saved.");
    await page.click('button:has-text("Reveal")');
    const first = (await page.textContent("#webhook-secret"))!.trim();
    expect(first).toMatch(/^whsec_/);

    await page.click('button:has-text("Rotate secret")');
    const rotated = (await page.textContent("#webhook-secret"))!.trim();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(first);
    await shot("10-webhook-rotated");

    const before = receiver.received.length;
    await page.click('button:has-text("Send test event")');
    await expect(page.textContent("#test-result")).resolves.toContain("Test event delivered");
    await shot("11-webhook-test");
    const hook = receiver.received[before];
    expect((new Webhook(rotated).verify(hook.body, hook.headers) as { event: string }).event).toBe("test");
    expect(() => new Webhook(first).verify(hook.body, hook.headers)).toThrow();
  });

  it("uploads a dropped file and a picked one (multipart), the progress reaching 100%, then encodes the picked one", async () => {
    // A small MP4 (one relayed PUT), and a raw 10 MB Matroska file (two parts: 8 MiB and the rest).
    const dropped = join(fixtures.dir, "dropped.mp4");
    await makeSource(dropped, { seconds: 2, width: 320, height: 240 });
    const picked = join(fixtures.dir, "picked.mkv");
    await ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=3", "-c:v", "rawvideo", picked]);
    expect((await stat(picked)).size).toBeGreaterThan(9 * 1024 * 1024);

    await page.click("nav >> text=Upload");
    await page.waitForURL("**/dashboard/upload");
    await expect(page.isDisabled("#encode")).resolves.toBe(true);
    const uploaded = (name: string) =>
      page.waitForFunction(
        (text) => document.getElementById("upload-status")?.textContent?.includes(text),
        `${name} is uploaded`,
        { timeout: 60_000 },
      );

    const dataTransfer = await page.evaluateHandle(
      ({ base64, name }) => {
        const bytes = Uint8Array.from(atob(base64), (ch) => ch.charCodeAt(0));
        const transfer = new DataTransfer();
        transfer.items.add(new File([bytes], name, { type: "video/mp4" }));
        return transfer;
      },
      { base64: (await readFile(dropped)).toString("base64"), name: "dropped.mp4" },
    );
    await page.dispatchEvent("#drop-zone", "dragover", { dataTransfer });
    await page.dispatchEvent("#drop-zone", "drop", { dataTransfer });
    await uploaded("dropped.mp4");
    await expect(page.textContent("#upload-percent")).resolves.toBe("100%");
    await shot("12-upload-dropped");

    // The bar's values as the picked file goes up, sampled every few milliseconds.
    await page.evaluate(() => {
      const bar = document.getElementById("upload-progress") as HTMLProgressElement;
      const seen: number[] = [];
      (window as ProgressWindow).progressSeen = seen;
      setInterval(() => seen.push(bar.value), 5);
    });
    await page.setInputFiles("#file-input", picked);
    await uploaded("picked.mkv");
    const seen = await page.evaluate(() => (window as ProgressWindow).progressSeen ?? []);
    // The dropped file's 100% until the bar starts again, then rising to 100% through the parts.
    const rising = seen.slice(seen.findIndex((value) => value < 100));
    expect(rising.length, seen.join(" ")).toBeLessThan(seen.length);
    expect(
      rising.every((value, i) => i === 0 || value >= rising[i - 1]),
      rising.join(" "),
    ).toBe(true);
    expect(
      rising.some((value) => value > 0 && value < 100),
      rising.join(" "),
    ).toBe(true);
    expect(rising.at(-1)).toBe(100);
    await expect(page.textContent("#upload-percent")).resolves.toBe("100%");
    await shot("13-upload-picked");

    await page.selectOption("#preset", "mp4_264_480p");
    await page.click('button:has-text("Encode")');
    await page.waitForURL(/\/dashboard\/jobs\/[0-9a-f-]{36}$/);
    // The job page follows its job, its details refreshed in place, until it settles.
    await page.waitForSelector('#job[data-active="false"]', { timeout: 240_000 });
    await expect(page.textContent("#job .status")).resolves.toContain("completed");
    await shot("14-upload-encoded");
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("text=Download")]);
    expect(download.suggestedFilename()).toBe("mp4_264_480p.mp4");
    const probed = await ffprobeJson((await download.path())!);
    const video = probed.streams.find((stream) => stream.codec_type === "video");
    expect(video).toMatchObject({ codec_name: "h264" });
    expect(Number(probed.format.duration)).toBeCloseTo(3, 0);
    // Its source is the upload's object, as a signed link.
    expect(await page.textContent("#job")).toMatch(/\/uploads\/[0-9a-f-]{36}\/[0-9a-f-]{36}\/source\?/);
  });

  it("signs out, and the page logged no error (no Content-Security-Policy refusal) on the way", async () => {
    await page.click('button:has-text("Sign out")');
    await page.waitForURL("**/dashboard/signin");
    await page.goto("/dashboard/keys");
    expect(new URL(page.url()).pathname).toBe("/dashboard/signin");
    expect(pageErrors).toEqual([]);
  });
});
