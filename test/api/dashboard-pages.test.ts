import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { users } from "../../drizzle/schema";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { bodyOf } from "../support/api-client";
import { api, createJob, internal, stack } from "./harness";
import { formToken, signedUp } from "./dashboard-session";
import { completeWith, storedZip } from "./dashboard-outputs";
import { admin } from "./harness";
import { claimStream, completeStream, reportSegments, STREAM_LAYOUT } from "./stream-reports";

const accountOf = async (email: string) =>
  (await admin.db.select().from(users).where(eq(users.email, email)))[0].accountId;

let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.stop());

describe("dashboard: API keys", () => {
  it("a named key is shown whole once, works on the API, and afterwards appears only as its last four", async () => {
    const { session } = await signedUp();
    const key = await session.createKey("ci server");
    expect(key).toMatch(/^spk_[A-Za-z0-9]{43}$/);
    expect((await api(key).listJobs()).status).toBe(200);

    const list = await session.get("/dashboard/keys");
    expect(list.html).toContain("ci server");
    expect(list.html).toContain(`…${key.slice(-4)}`);
    expect(list.html).not.toContain(key);
    expect(list.html).not.toContain(key.slice(4, 20));
  });

  it("a key needs a name of at most 80 characters", async () => {
    const { session } = await signedUp();
    for (const name of ["", "   ", "x".repeat(81)]) {
      const res = await session.submit("/dashboard/keys", "/dashboard/keys", { name });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(res.html).toContain("Name the key");
    }
  });

  it("revoking asks first, then the API refuses the key at once although its lookup was cached", async () => {
    const { session } = await signedUp();
    const key = await session.createKey("short-lived");
    expect((await api(key).listJobs()).status).toBe(200);
    const list = await session.get("/dashboard/keys");
    const id = /data-key-id="([^"]+)"/.exec(list.html)![1];

    const confirm = await session.get(`/dashboard/keys/${id}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain("This cannot be undone.");
    expect((await api(key).listJobs()).status).toBe(200);

    const revoked = await session.post(`/dashboard/keys/${id}/revoke`, { _csrf: formToken(confirm.html) });
    expect(revoked.status).toBe(303);
    expect(revoked.location).toBe(`/dashboard/keys?revoked=${key.slice(-4)}`);
    expect((await api(key).listJobs()).status).toBe(401);
    const after = await session.get(revoked.location!);
    expect(after.html).toContain(`Key …${key.slice(-4)} revoked.`);
    expect(after.html).toMatch(/revoked \d{4}-\d{2}-\d{2}/);
    // A second revoke finds no active key.
    expect((await session.post(`/dashboard/keys/${id}/revoke`, { _csrf: formToken(confirm.html) })).status).toBe(404);
  });
});

describe("dashboard: webhook", () => {
  it("refuses a URL that is not absolute http(s), or that holds credentials fetch would refuse to send", async () => {
    const { session } = await signedUp();
    for (const url of ["ftp://hooks.example.com/x", "javascript:alert(1)", "/relative", "http://"]) {
      const res = await session.submit("/dashboard/webhook", "/dashboard/webhook", { url });
      expect(res.status, url).toBe(400);
      expect(res.html).toContain("absolute http:// or https:// URL");
    }
    for (const url of ["https://user:pw@hooks.example.com/x", "https://user@hooks.example.com/x"]) {
      const res = await session.submit("/dashboard/webhook", "/dashboard/webhook", { url });
      expect(res.status, url).toBe(400);
      expect(res.html).toContain("must not hold a user name or password");
    }
  });

  it("a redirect is not followed: the POST would arrive as a GET without its payload, and count as delivered", async () => {
    const seen: string[] = [];
    const redirecting = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === "/hook") res.writeHead(301, { location: "/moved" }).end();
      else res.writeHead(200).end("a page");
    });
    await new Promise<void>((r) => redirecting.listen(0, "127.0.0.1", r));
    try {
      const { session } = await signedUp();
      await session.submit("/dashboard/webhook", "/dashboard/webhook", {
        url: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hook`,
      });
      const tested = await session.submit("/dashboard/webhook", "/dashboard/webhook/test");
      expect(tested.html).toContain(
        "Test event not delivered: the endpoint answered 301 (a redirect, not followed: set the webhook to the URL it leads to).",
      );
      expect(seen).toEqual(["POST /hook"]);
    } finally {
      await new Promise((r) => redirecting.close(r));
    }
  });

  it("set, reveal, rotate, test: the test event is signed with the current secret; the API sees the new URL at once", async () => {
    const { session } = await signedUp();
    const key = await session.createKey();
    expect(
      bodyOf(await api(key).createJob({ inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" }), 201)
        .webhookUrl,
    ).toBeNull();

    const saved = await session.submit("/dashboard/webhook", "/dashboard/webhook", { url: receiver.url });
    expect(saved.status).toBe(303);
    const page = await session.get(saved.location!);
    expect(page.html).toContain("Webhook saved.");
    expect(page.html).not.toMatch(/whsec_[A-Za-z0-9+/]{10}/);
    expect(
      bodyOf(await api(key).createJob({ inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" }), 201)
        .webhookUrl,
    ).toBe(receiver.url);

    const revealed = await session.post("/dashboard/webhook/reveal", { _csrf: formToken(page.html) });
    const secret = /<code id="webhook-secret">(whsec_[^<]+)<\/code>/.exec(revealed.html)![1];

    const rotated = await session.post("/dashboard/webhook/rotate", { _csrf: formToken(page.html) });
    const newSecret = /<code id="webhook-secret">(whsec_[^<]+)<\/code>/.exec(rotated.html)![1];
    expect(newSecret).not.toBe(secret);
    expect(rotated.html).toContain("Secret rotated.");

    const before = receiver.received.length;
    const tested = await session.post("/dashboard/webhook/test", { _csrf: formToken(page.html) });
    expect(tested.html).toContain("Test event delivered");
    const hook = receiver.received[before];
    const payload = new Webhook(newSecret).verify(hook.body, hook.headers) as { event: string };
    expect(payload.event).toBe("test");
    expect(() => new Webhook(secret).verify(hook.body, hook.headers)).toThrow();

    // Saving another URL keeps the secret the receiver has.
    await session.submit("/dashboard/webhook", "/dashboard/webhook", { url: `${receiver.url}/other` });
    const again = await session.submit("/dashboard/webhook", "/dashboard/webhook/reveal");
    expect(again.html).toContain(newSecret);
  });

  it("a test event to an endpoint that fails says why; an empty URL removes the webhook", async () => {
    const { session } = await signedUp();
    await session.submit("/dashboard/webhook", "/dashboard/webhook", { url: "http://127.0.0.1:9/unreachable" });
    const tested = await session.submit("/dashboard/webhook", "/dashboard/webhook/test");
    expect(tested.html).toContain(
      "Test event not delivered: the endpoint could not be reached or did not answer within 15 s.",
    );

    await session.submit("/dashboard/webhook", "/dashboard/webhook", { url: "" });
    const page = await session.get("/dashboard/webhook");
    expect(page.html).not.toContain("Signing secret");
    expect(page.html).toContain('value=""');
  });
});

describe("dashboard: usage, plan and presets", () => {
  it("usage this month counts the account's jobs against its quota; locked presets carry their upgrade message", async () => {
    const { session } = await signedUp();
    const key = await session.createKey();
    await createJob(key);
    await createJob(key);
    const home = await session.get("/dashboard");
    expect(home.html).toContain("2 of 10 jobs used");
    expect(home.html).toMatch(/<meter[^>]*max="10"[^>]*value="2"/);

    const plan = await session.get("/dashboard/plan");
    expect(plan.html).toContain("Starter plan");
    expect(plan.html.match(/data-preset="/g)).toHaveLength(23);
    expect(plan.html).toContain("Upgrade to the Indie/Pro plan to use");
    expect(plan.html).toMatch(/data-preset="mp4_264_720p"[\s\S]*?included/);
  });
});

describe("dashboard: jobs", () => {
  it("lists the account's jobs with status; a completed MP4 downloads through its signed link and plays with range requests", async () => {
    const { session, email } = await signedUp();
    const accountId = await accountOf(email);
    const key = await session.createKey();
    const job = await createJob(key);

    const queued = await session.get("/dashboard/jobs");
    expect(queued.html).toMatch(new RegExp(`data-job-id="${job.id}" data-status="queued"`));
    expect(queued.html).toContain('data-active="true"');

    const bytes = Buffer.from("not really an mp4, but bytes all the same");
    await completeWith(job.id, accountId, "mp4_264_720p.mp4", bytes, "video/mp4");
    const table = await session.get("/dashboard/jobs/table");
    expect(table.html).toMatch(new RegExp(`data-job-id="${job.id}" data-status="completed"`));
    expect(table.html).toContain('data-active="false"');
    expect(table.html).toContain(`/dashboard/jobs/${job.id}/download`);

    const download = await session.get(`/dashboard/jobs/${job.id}/download`);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toBe('attachment; filename="mp4_264_720p.mp4"');
    // The browser keeps no copy that would outlive the session.
    expect(download.headers.get("cache-control")).toBe("no-store");
    expect(download.html).toBe(bytes.toString());

    const whole = await session.get(`/dashboard/jobs/${job.id}/output`);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("video/mp4");
    expect(whole.headers.get("cache-control")).toBe("no-store");
    expect(whole.html).toBe(bytes.toString());
    const part = await session.get(`/dashboard/jobs/${job.id}/output`, { Range: "bytes=4-9" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 4-9/${bytes.length}`);
    expect(part.html).toBe(bytes.subarray(4, 10).toString());
    // Ranges a client may send that storage cannot serve are answered, never a 500.
    expect((await session.get(`/dashboard/jobs/${job.id}/output`, { Range: "bytes=100000-" })).status).toBe(416);
    for (const range of ["bytes=abc", "pages=1-2", "bytes=9-4"]) {
      expect((await session.get(`/dashboard/jobs/${job.id}/output`, { Range: range })).status, range).toBeLessThan(500);
    }

    const detail = await session.get(`/dashboard/jobs/${job.id}`);
    expect(detail.html).toMatch(new RegExp(`<video id="player" controls[^>]* src="/dashboard/jobs/${job.id}/output">`));
    // The page also gives the signed link the API would, which needs neither key nor session.
    const signed = /<code id="signed-link">([^<]+)<\/code>/.exec(detail.html)![1].replaceAll("&amp;", "&");
    expect(signed).toMatch(/X-Amz-Signature=/);
    expect(Buffer.from(await (await fetch(signed)).arrayBuffer())).toEqual(bytes);
  });

  it("serves an HLS output's members one by one out of the ZIP in storage", async () => {
    const { session, email } = await signedUp();
    const accountId = await accountOf(email);
    const key = await session.createKey();
    const job = await createJob(key, "hls_abr_264_basic");
    const members = {
      "master.m3u8": "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\n0/index.m3u8\n",
      "0/index.m3u8": "#EXTM3U\n#EXTINF:6,\nsegment_000.ts\n#EXT-X-ENDLIST\n",
      "0/segment_000.ts": Buffer.alloc(100_000, 0x47),
    };
    await completeWith(job.id, accountId, "hls_abr_264_basic.zip", await storedZip(members), "application/zip");

    const detail = await session.get(`/dashboard/jobs/${job.id}`);
    expect(detail.html).toContain(`data-hls-src="/dashboard/jobs/${job.id}/files/master.m3u8"`);
    expect(detail.html).toContain("/dashboard/assets/hls.light.min.js");

    const master = await session.get(`/dashboard/jobs/${job.id}/files/master.m3u8`);
    expect(master.status).toBe(200);
    expect(master.headers.get("content-type")).toBe("application/vnd.apple.mpegurl");
    expect(master.html).toBe(members["master.m3u8"]);
    const variant = await session.get(`/dashboard/jobs/${job.id}/files/0/index.m3u8`);
    expect(variant.html).toBe(members["0/index.m3u8"]);
    const segment = await fetch(`${stack.apiUrl}/dashboard/jobs/${job.id}/files/0/segment_000.ts`, {
      headers: { Cookie: session.cookieHeader() },
    });
    expect(segment.headers.get("content-type")).toBe("video/mp2t");
    expect(segment.headers.get("cache-control")).toBe("no-store");
    expect(Buffer.from(await segment.arrayBuffer())).toEqual(members["0/segment_000.ts"]);

    for (const name of ["nope.m3u8", "0", "0/", "../master.m3u8", "%ZZ"]) {
      expect((await session.get(`/dashboard/jobs/${job.id}/files/${name}`)).status, name).toBe(404);
    }
  });

  it("a job that is not completed has nothing to download or play", async () => {
    const { session } = await signedUp();
    const job = await createJob(await session.createKey());
    const download = await session.get(`/dashboard/jobs/${job.id}/download`);
    expect(download.status).toBe(404);
    expect(download.html).toContain("This job has no output yet.");
    expect((await session.get(`/dashboard/jobs/${job.id}/output`)).status).toBe(404);
    expect((await session.get(`/dashboard/jobs/${job.id}/files/master.m3u8`)).status).toBe(404);
  });
});

describe("dashboard: navigation", () => {
  it("links the interactive API reference, which the same Worker serves", async () => {
    const { session } = await signedUp();
    const page = await session.get("/dashboard");
    expect(page.html).toContain('<a href="/docs">API reference</a>');
    expect((await fetch(`${stack.apiUrl}/docs`)).status).toBe(200);
  });
});

describe("dashboard: a stream while it encodes (docs/playback.md)", () => {
  /** A signed-up session on `plan` with a key, and its account. */
  async function streamingAccount(plan: "free" | "business") {
    const { session, email } = await signedUp();
    const accountId = await accountOf(email);
    if (plan !== "free") await admin.setPlan(accountId, plan);
    return { session, accountId, key: await session.createKey() };
  }
  const attribute = (html: string, name: string) => new RegExp(`${name}="([^"]+)"`).exec(html)?.[1];

  it("a job page waits for the stream, then plays it through its playback link on this origin; the panel it refreshes from carries the progress", async () => {
    const { session, accountId, key } = await streamingAccount("free");
    const job = await createJob(key, "hls_abr_264_basic");
    const queued = await session.get(`/dashboard/jobs/${job.id}`);
    expect(queued.html).toContain('id="stream-waiting"');
    expect(queued.html).not.toContain('id="player"');
    // Loaded already, for the player the refresh brings in.
    expect(queued.html).toContain("/dashboard/assets/hls.light.min.js");
    expect(attribute(queued.html, "data-refresh")).toBe(`/dashboard/jobs/${job.id}/panel`);

    const claim = await claimStream(job.id);
    await internal(`/jobs/${job.id}/heartbeat`, { claim, progress: 0.4 });
    await reportSegments(job.id, claim, 0);
    const panel = await session.get(`/dashboard/jobs/${job.id}/panel`);
    expect(panel.status).toBe(200);
    expect(panel.html).toMatch(/^<div id="job-panel" data-refresh="[^"]+">/);
    expect(panel.html).toContain('data-active="true"');
    expect(panel.html).toMatch(/<progress max="1" value="0.4"><\/progress> 40%/);
    const src = attribute(panel.html, "data-hls-src");
    expect(src).toMatch(new RegExp(`^/play/${job.id}/\\d+\\.[A-Za-z0-9_-]{43}/master\\.m3u8$`));
    const master = await fetch(`${stack.apiUrl}${src}`);
    expect(master.status).toBe(200);
    expect(await master.text()).toMatch(/^#EXTM3U/);
    // The link itself, as the API gives it, to open in another player.
    const shown = /<code id="playback-link">([^<]+)<\/code>/.exec(panel.html)?.[1];
    expect(shown).toBe(`${stack.apiUrl}${src}`);
    expect((await api(key).getJob(job.id)).body).toMatchObject({ status: "processing" });

    const list = await session.get("/dashboard/jobs");
    expect(list.html).toMatch(new RegExp(`data-job-id="${job.id}"[\\s\\S]*?Watch while it encodes`));

    await completeStream(job.id, accountId, claim);
    const done = await session.get(`/dashboard/jobs/${job.id}/panel`);
    expect(done.html).toContain('data-active="false"');
    expect(attribute(done.html, "data-hls-src")).toMatch(/\/master\.m3u8$/);
    expect(done.html).toContain(`/dashboard/jobs/${job.id}/download`);
    expect(done.html).not.toContain("Playing from the start while the job encodes");
    expect((await session.get("/dashboard/jobs")).html).not.toContain("Watch while it encodes");
  });

  it("a DASH preset's page loads dash.js and plays the MPD", async () => {
    const { session, key } = await streamingAccount("business");
    const job = await createJob(key, "dash_abr_264_standard");
    const queued = await session.get(`/dashboard/jobs/${job.id}`);
    expect(queued.html).toContain("/dashboard/assets/dash.all.min.js");
    expect(queued.html).not.toContain("/dashboard/assets/hls.light.min.js");
    const claim = await claimStream(job.id);
    await reportSegments(job.id, claim, 0, {
      ...STREAM_LAYOUT,
      segmentType: "fmp4",
      manifest: "dash",
      segmentSeconds: 4,
    });
    const page = await session.get(`/dashboard/jobs/${job.id}`);
    const src = attribute(page.html, "data-dash-src");
    expect(src).toMatch(new RegExp(`^/play/${job.id}/\\d+\\.[A-Za-z0-9_-]{43}/manifest\\.mpd$`));
    const mpd = await fetch(`${stack.apiUrl}${src}`);
    expect(mpd.headers.get("content-type")).toBe("application/dash+xml");
    expect(await mpd.text()).toMatch(/type="dynamic"/);
  });

  it("a stream cancelled while it plays leaves no player, no link and no player script", async () => {
    const { session, key } = await streamingAccount("free");
    const job = await createJob(key, "hls_abr_264_basic");
    await reportSegments(job.id, await claimStream(job.id), 0);
    expect((await session.get(`/dashboard/jobs/${job.id}`)).html).toContain('id="player"');
    await api(key).cancelJob(job.id);
    const page = await session.get(`/dashboard/jobs/${job.id}`);
    expect(page.html).not.toContain('id="player"');
    expect(page.html).not.toContain("playback-link");
    expect(page.html).not.toContain("stream-waiting");
    expect(page.html).not.toContain("/dashboard/assets/hls.light.min.js");
  });
});
