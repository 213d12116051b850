import { request } from "node:http";
import { Parser } from "m3u8-parser";
import { parse as parseMpd } from "mpd-parser";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it, vi } from "vitest";
import { outputKeyFor } from "../../domain/jobs";
import { type StreamLayout, streamPrefix } from "../../domain/stream/layout";
import { playbackToken } from "../../worker/lib/playback-links";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { admin, api, createJob, internal, newAccount, objectUrl, readJob, s3, stack } from "./harness";

/**
 * A streaming job's playback link, driven as the encoder drives it (docs/contract.md §3.1, the
 * playbackUrl field; docs/playback.md): the link appears once every rendition has its first
 * segment stored, the Worker serves the playlists it writes from the segments recorded and the
 * segments from storage, under one signed path; cancel takes it all away.
 */
const hooks = await startWebhookReceiver();
afterAll(() => hooks.stop());

const LAYOUT: StreamLayout = {
  segmentType: "mpegts",
  manifest: "hls",
  segmentSeconds: 6,
  programDateTime: false,
  renditions: [
    {
      name: "720p",
      kind: "video",
      bandwidth: 3_300_000,
      averageBandwidth: 3_000_000,
      width: 1280,
      height: 720,
      frameRate: "30/1",
    },
    {
      name: "480p",
      kind: "video",
      bandwidth: 1_540_000,
      averageBandwidth: 1_400_000,
      width: 854,
      height: 480,
      frameRate: "30/1",
    },
    { name: "audio", kind: "audio", bandwidth: 128_000, averageBandwidth: 128_000 },
  ],
};
const CODECS: Record<string, string> = { "720p": "avc1.64001f", "480p": "avc1.64001e", audio: "mp4a.40.2" };

/** A segment as an encoder reports it: segment 0 carries its rendition's codecs. */
const segment = (rendition: string, index: number, duration = 6) => ({
  rendition,
  index,
  duration,
  ...(index === 0 && { codecs: CODECS[rendition] }),
});

/** A job of `preset` claimed as its encoder would claim it. */
async function claimedStream(preset = "hls_abr_264_basic", plan: "free" | "business" = "free") {
  const { apiKey, accountId } = await newAccount(plan);
  const { secret } = await admin.setWebhook(accountId, hooks.url);
  const job = await createJob(apiKey, preset);
  const claimed = await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
  const claim = claimed.body.job?.claim;
  if (claim === undefined) throw new Error(`claim failed: ${claimed.status}`);
  const report = (body: object) => internal(`/jobs/${job.id}/stream`, { claim, segments: [], ...body });
  return { apiKey, accountId, jobId: job.id, claim, report, webhookSecret: secret };
}

/** Stores a segment's bytes where the encoder puts them. */
async function store(accountId: string, jobId: string, member: string, body: string) {
  const put = await s3.fetch(objectUrl(`${streamPrefix(accountId, jobId)}${member}`), { method: "PUT", body });
  expect(put.status).toBe(200);
}

const playlist = (text: string) => {
  const parser = new Parser();
  parser.push(text);
  parser.end();
  return parser.manifest;
};

/** A path under a playback link: its directory with `member` in place of the manifest. */
const memberUrl = (link: string, member: string) => new URL(member, link).toString();

describe("contract §3.1 playbackUrl › given once every rendition's first segment is stored", () => {
  it("is null while queued, and while some rendition still lacks its first segment", async () => {
    const { apiKey, jobId, report } = await claimedStream();
    expect((await readJob(apiKey, jobId)).playbackUrl).toBeNull();
    const first = await report({ layout: LAYOUT, segments: [segment("720p", 0), segment("480p", 0)] });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: "processing", playable: false });
    const job = await readJob(apiKey, jobId);
    expect(job).toMatchObject({ status: "processing", playbackUrl: null });
  });

  it("is given while processing, on the read and the list, as a signed link to the master playlist; job.playable is sent once", async () => {
    const { apiKey, jobId, report, webhookSecret } = await claimedStream();
    await report({ layout: LAYOUT, segments: [segment("720p", 0), segment("480p", 0)] });
    const last = await report({ segments: [segment("audio", 0)] });
    expect(last.body).toMatchObject({ playable: true });
    const job = await readJob(apiKey, jobId);
    expect(job.status).toBe("processing");
    expect(job.playbackUrl).toMatch(
      new RegExp(`^${stack.apiUrl.replace(/\./g, "\\.")}/play/${jobId}/\\d+\\.[A-Za-z0-9_-]{43}/master\\.m3u8$`),
    );
    const listed = (await api(apiKey).listJobs({})).body;
    expect(listed && "jobs" in listed ? listed.jobs[0].playbackUrl : undefined).toMatch(/\/master\.m3u8$/);

    const hook = await hooks.waitFor(jobId);
    const payload = JSON.parse(hook.body);
    expect(payload).toMatchObject({ event: "job.playable", jobId, status: "processing", preset: "hls_abr_264_basic" });
    expect(payload.playbackUrl).toMatch(/\/master\.m3u8$/);
    expect(() => new Webhook(webhookSecret).verify(hook.body, hook.headers)).not.toThrow();
    // A second report that still finds every first segment sends nothing more.
    await report({ segments: [segment("720p", 1)] });
    await report({ segments: [segment("audio", 1)] });
    expect(
      hooks.received.filter((h) => JSON.parse(h.body).event === "job.playable" && JSON.parse(h.body).jobId === jobId),
    ).toHaveLength(1);
  });

  it("is null for a preset that is not a stream, whatever is reported", async () => {
    const { apiKey } = await newAccount("free");
    const job = await createJob(apiKey, "mp4_264_480p");
    const claim = (await internal(`/jobs/${job.id}/claim`, { dispatch: 0 })).body.job?.claim;
    await internal(`/jobs/${job.id}/stream`, {
      claim,
      layout: LAYOUT,
      segments: LAYOUT.renditions.map((r) => segment(r.name, 0)),
    });
    expect((await readJob(apiKey, job.id)).playbackUrl).toBeNull();
  });

  it("a report from a claim that no longer holds the job is a 409 naming its status, and records nothing", async () => {
    const { apiKey, jobId, claim } = await claimedStream();
    await api(apiKey).cancelJob(jobId);
    const late = await internal(`/jobs/${jobId}/stream`, { claim, layout: LAYOUT, segments: [segment("720p", 0)] });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ error: "Conflict", status: "cancelled" });
    const stale = await internal(`/jobs/${jobId}/stream`, { claim: claim + 1, segments: [] });
    expect(stale.status).toBe(409);
  });
});

describe("docs/playback.md › the playlists grow, then end", () => {
  it("the master names every rung with its codecs and size, the audio as a shared rendition; each media playlist is EVENT, the unbroken run from segment 0", async () => {
    const { apiKey, jobId, report } = await claimedStream();
    await report({ layout: LAYOUT, segments: LAYOUT.renditions.map((r) => segment(r.name, 0)) });
    await report({ segments: [segment("720p", 1), segment("720p", 3, 5)] });
    const link = (await readJob(apiKey, jobId)).playbackUrl;
    if (!link) throw new Error("no playback link");

    const master = await fetch(link);
    expect(master.status).toBe(200);
    expect(master.headers.get("content-type")).toBe("application/vnd.apple.mpegurl");
    expect(master.headers.get("cache-control")).toBe("no-store");
    expect(master.headers.get("access-control-allow-origin")).toBe("*");
    const parsed = playlist(await master.text());
    expect(parsed.playlists?.map((p) => p.uri)).toEqual(["720p/index.m3u8", "480p/index.m3u8"]);
    expect(parsed.playlists?.[0].attributes).toMatchObject({
      BANDWIDTH: 3_428_000,
      CODECS: "avc1.64001f,mp4a.40.2",
      RESOLUTION: { width: 1280, height: 720 },
      AUDIO: "audio",
    });
    expect(parsed.mediaGroups?.AUDIO?.audio.audio).toMatchObject({ uri: "audio/index.m3u8", default: true });

    const media = playlist(await (await fetch(memberUrl(link, "720p/index.m3u8"))).text());
    expect(media).toMatchObject({ playlistType: "EVENT", mediaSequence: 0, targetDuration: 6 });
    expect(media.endList).toBeUndefined();
    expect(media.start).toMatchObject({ timeOffset: 0 });
    // Segment 2 is missing: 3 waits behind it.
    expect(media.segments.map((s) => [s.uri, s.duration])).toEqual([
      ["seg_00000.ts", 6],
      ["seg_00001.ts", 6],
    ]);
  });

  it("once the job completes, the same link serves the VOD playlist over the same segments", async () => {
    const { apiKey, accountId, jobId, claim, report } = await claimedStream();
    await report({ layout: LAYOUT, segments: LAYOUT.renditions.map((r) => segment(r.name, 0)) });
    await report({ segments: [segment("720p", 1, 2.5), segment("480p", 1, 2.5), segment("audio", 1, 2.5)] });
    const link = (await readJob(apiKey, jobId)).playbackUrl;
    if (!link) throw new Error("no playback link");
    const growing = playlist(await (await fetch(memberUrl(link, "480p/index.m3u8"))).text());

    const key = outputKeyFor(accountId, jobId, "hls_abr_264_basic.zip");
    expect((await s3.fetch(objectUrl(key), { method: "PUT", body: "zip" })).status).toBe(200);
    expect((await internal(`/jobs/${jobId}/complete`, { claim, outputKey: key, duration: 8.5 })).status).toBe(200);
    const finished = await fetch(memberUrl(link, "480p/index.m3u8"));
    expect(finished.headers.get("cache-control")).toMatch(/^public, max-age=\d+$/);
    const vod = playlist(await finished.text());
    expect(vod).toMatchObject({ playlistType: "VOD", endList: true });
    expect(vod.segments).toEqual(growing.segments);
    const done = await readJob(apiKey, jobId);
    expect(done).toMatchObject({ status: "completed" });
    expect(done.playbackUrl).toMatch(/\/master\.m3u8$/);
    const completed = await vi.waitFor(() => {
      const hook = hooks.received.find(
        (h) => JSON.parse(h.body).jobId === jobId && JSON.parse(h.body).event === "job.completed",
      );
      if (!hook) throw new Error("no job.completed yet");
      return JSON.parse(hook.body);
    });
    expect(completed.playbackUrl).toMatch(/\/master\.m3u8$/);
  });

  it("a DASH preset's link is its MPD: dynamic while processing, static once complete", async () => {
    const { apiKey, accountId, jobId, claim, report } = await claimedStream("dash_abr_264_standard", "business");
    const fmp4 = { ...LAYOUT, segmentType: "fmp4" as const, manifest: "dash" as const, segmentSeconds: 4 };
    await report({
      layout: fmp4,
      segments: fmp4.renditions.map((r) => ({ ...segment(r.name, 0, 2), start: 10 })),
    });
    const link = (await readJob(apiKey, jobId)).playbackUrl;
    expect(link).toMatch(/\/manifest\.mpd$/);
    if (!link) throw new Error("no playback link");
    const dynamic = await fetch(link);
    expect(dynamic.headers.get("content-type")).toBe("application/dash+xml");
    const live = await dynamic.text();
    expect(live).toMatch(/type="dynamic"/);
    const manifest = parseMpd(live, { manifestUri: link });
    expect(manifest.playlists.map((p: { attributes: { NAME: string } }) => p.attributes.NAME).sort()).toEqual([
      "480p",
      "720p",
    ]);
    expect(manifest.playlists[0].segments[0].resolvedUri).toMatch(/\/(720p|480p)\/seg_00000\.m4s$/);

    const key = outputKeyFor(accountId, jobId, "dash_abr_264_standard.zip");
    await s3.fetch(objectUrl(key), { method: "PUT", body: "zip" });
    await internal(`/jobs/${jobId}/complete`, { claim, outputKey: key, duration: 2 });
    expect(await (await fetch(link)).text()).toMatch(/type="static" mediaPresentationDuration="PT2S"/);
    // The HLS master is not this stream's.
    expect((await fetch(memberUrl(link, "master.m3u8"))).status).toBe(404);
  });
});

describe("docs/playback.md › segments from storage", () => {
  it("served with their type, byte ranges, CORS and cached for as long as the link lives; a segment not stored is a 404", async () => {
    const { apiKey, accountId, jobId, report } = await claimedStream();
    await report({ layout: LAYOUT, segments: LAYOUT.renditions.map((r) => segment(r.name, 0)) });
    await store(accountId, jobId, "720p/seg_00000.ts", "0123456789");
    const link = (await readJob(apiKey, jobId)).playbackUrl;
    if (!link) throw new Error("no playback link");
    const url = memberUrl(link, "720p/seg_00000.ts");

    const whole = await fetch(url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("video/mp2t");
    expect(whole.headers.get("accept-ranges")).toBe("bytes");
    expect(whole.headers.get("access-control-allow-origin")).toBe("*");
    const maxAge = Number(/max-age=(\d+)/.exec(whole.headers.get("cache-control") ?? "")?.[1]);
    expect(whole.headers.get("cache-control")).toMatch(/^public, max-age=\d+, immutable$/);
    // No longer than the link lives (the free plan's link lifetime), however far a year would reach.
    expect(maxAge).toBeGreaterThan(0);
    const expires = Number(new URL(link).pathname.split("/")[3].split(".")[0]);
    expect(maxAge).toBeLessThanOrEqual(expires - Math.floor(Date.now() / 1000) + 1);
    expect(await whole.text()).toBe("0123456789");

    const ranged = await fetch(url, { headers: { Range: "bytes=2-5" } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe("bytes 2-5/10");
    expect(await ranged.text()).toBe("2345");

    const head = await fetch(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("10");

    const missing = await fetch(memberUrl(link, "720p/seg_00001.ts"));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: "Not found" });
  });
});

describe("docs/playback.md › the link: one signature for one job's tree", () => {
  async function playable() {
    const stream = await claimedStream();
    await stream.report({ layout: LAYOUT, segments: LAYOUT.renditions.map((r) => segment(r.name, 0)) });
    await store(stream.accountId, stream.jobId, "720p/seg_00000.ts", "bytes");
    const link = (await readJob(stream.apiKey, stream.jobId)).playbackUrl;
    if (!link) throw new Error("no playback link");
    return { ...stream, link };
  }

  it("a tampered signature, an expired one, and another job's are refused with 403", async () => {
    const { link, jobId } = await playable();
    const other = await playable();
    const [, , , token] = new URL(link).pathname.split("/");
    const tampered = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
    const expired = await playbackToken(stack.internalSecret, jobId, Math.floor(Date.now() / 1000) - 1);
    const foreign = new URL(other.link).pathname.split("/")[3];
    for (const bad of [tampered, expired, foreign, "123.short", "not-a-token"]) {
      const res = await fetch(link.replace(token, bad));
      expect(res.status, bad).toBe(403);
      expect(await res.json()).toMatchObject({ error: "Forbidden" });
    }
    expect((await fetch(link)).status).toBe(200);
  });

  it.each([
    "720p%2Fseg_00000.ts",
    "720p%2F..%2F..%2Fmaster.m3u8",
    "1080p/index.m3u8",
    "720p/init.mp4",
    "720p/seg_0.ts",
    "720p/seg_00000.m4s",
    "manifest.mpd",
    "720p/index.m3u8/x",
    "secret.txt",
  ])("%s is not a member: 404", async (member) => {
    const { link } = await playable();
    // Sent as written: fetch would resolve the dots itself before the Worker saw them.
    const url = new URL(link);
    const path = `${url.pathname.replace(/master\.m3u8$/, "")}${member}`;
    const status = await new Promise<number>((resolve, reject) =>
      request({ host: url.hostname, port: url.port, path }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on("error", reject)
        .end(),
    );
    expect(status, member).toBe(404);
  });

  it.each(["../../other/master.m3u8", "%2e%2e/%2e%2e/master.m3u8", "%2e%2e/%2e%2e/%2e%2e/master.m3u8"])(
    "%s: dot segments are resolved before the link is read: one that climbs past the signature is refused",
    async (member) => {
      const { link } = await playable();
      const url = new URL(link);
      const path = `${url.pathname.replace(/master\.m3u8$/, "")}${member}`;
      const status = await new Promise<number>((resolve, reject) =>
        request({ host: url.hostname, port: url.port, path }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on("error", reject)
          .end(),
      );
      // 403: the segment it lands on is taken for the signature; 404: it lands outside every link.
      expect([403, 404], member).toContain(status);
    },
  );

  it("methods other than GET and HEAD are refused with 405 naming them; a preflight is answered", async () => {
    const { link } = await playable();
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      const res = await fetch(link, { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
      expect(await res.json()).toMatchObject({ error: "Method not allowed" });
    }
    const preflight = await fetch(link, {
      method: "OPTIONS",
      headers: {
        Origin: "https://player.example",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "range",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("range");
  });

  it("a playable job queued again for a retry keeps its stream: the link, the read's playbackUrl, the segments listed", async () => {
    const { apiKey, jobId, claim, link } = await playable();
    const before = await (await fetch(memberUrl(link, "720p/index.m3u8"))).text();
    const failed = await internal(`/jobs/${jobId}/fail`, { claim, errorMessage: "encoder restarted", retryable: true });
    expect(failed.body).toEqual({ status: "queued" });
    const job = await readJob(apiKey, jobId);
    expect(job.status).toBe("queued");
    expect(job.playbackUrl).toMatch(/\/master\.m3u8$/);
    const again = await fetch(memberUrl(link, "720p/index.m3u8"));
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(before);
    expect(await (await fetch(memberUrl(link, "720p/seg_00000.ts"))).text()).toBe("bytes");
  });

  it("a cancelled job's stream is gone: the link is a 404, the read has no link, its segments are deleted", async () => {
    const { apiKey, accountId, jobId, link } = await playable();
    expect((await api(apiKey).cancelJob(jobId)).status).toBe(200);
    expect((await readJob(apiKey, jobId)).playbackUrl).toBeNull();
    expect((await fetch(link)).status).toBe(404);
    await vi.waitFor(async () => {
      const listed = await s3.fetch(
        `${objectUrl("").replace(/\/$/, "")}?list-type=2&prefix=${encodeURIComponent(streamPrefix(accountId, jobId))}`,
      );
      expect(await listed.text()).not.toMatch(/<Key>/);
    });
  });
});
