import { createHmac, randomUUID } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LINK_TTL_SECONDS } from "../../../domain/plans";
import {
  checkPlaybackToken,
  type PlaybackFacts,
  playbackLink,
  playbackLinks,
  playbackToken,
} from "../../../worker/lib/playback-links";

const SECRET = "a-secret-of-sixteen-or-more";
const ENV = { INTERNAL_SECRET: SECRET, PUBLIC_URL: "https://api.example.com" };
const NOW = new Date("2026-03-04T05:06:07.890Z");

const MALFORMED = "The playback link is malformed.";
const NOT_SIGNED = "The playback link's signature is not valid for this job.";
const EXPIRED = "The playback link has expired.";

/** Expiries in seconds since the epoch, from 2023 to 2096. */
const expiries = fc.integer({ min: 1_700_000_000, max: 4_000_000_000 });
const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** Characters a token may hold and a few it may not. */
const characters = fc.constantFrom(...BASE64URL, ".", "+", "/", "=", " ", "%");
/**
 * The shape of a token: the expiry's digits with no leading zero, a dot, the 43 characters of a
 * SHA-256 HMAC in base64url.
 */
const WELL_FORMED = /^[1-9]\d{0,11}\.[A-Za-z0-9_-]{43}$/;

describe("playback tokens (docs/playback.md#the-link)", () => {
  it("a token verifies for its job until its expiry, and from that second on is expired", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uuid(),
        expiries,
        fc.integer({ min: 1, max: 30 * 86_400_000 }),
        async (jobId, expires, ahead) => {
          const token = await playbackToken(SECRET, jobId, expires);
          expect(token).toMatch(WELL_FORMED);
          expect(token.startsWith(`${expires}.`)).toBe(true);
          expect(await checkPlaybackToken(SECRET, jobId, token, expires * 1000 - ahead)).toEqual({
            valid: true,
            expires,
          });
          expect(await checkPlaybackToken(SECRET, jobId, token, expires * 1000)).toEqual({
            valid: false,
            reason: EXPIRED,
          });
        },
      ),
    );
  });

  it("another job's id, another secret, or the secret itself as the key: the signature is refused", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uuid(), fc.uuid(), expiries, async (jobId, other, expires) => {
        fc.pre(jobId !== other);
        const token = await playbackToken(SECRET, jobId, expires);
        const now = expires * 1000 - 1;
        expect(await checkPlaybackToken(SECRET, other, token, now)).toEqual({ valid: false, reason: NOT_SIGNED });
        expect(await checkPlaybackToken(`${SECRET}!`, jobId, token, now)).toEqual({ valid: false, reason: NOT_SIGNED });
        // The key is derived for playback links alone: an HMAC under INTERNAL_SECRET itself does not pass.
        const raw = createHmac("sha256", SECRET).update(`${jobId}.${expires}`).digest("base64url");
        expect(await checkPlaybackToken(SECRET, jobId, `${expires}.${raw}`, now)).toEqual({
          valid: false,
          reason: NOT_SIGNED,
        });
      }),
    );
  });

  it("any one character changed (but the signature's last) or deleted: malformed, or not signed", async () => {
    const tokens = fc.tuple(fc.uuid(), expiries).chain(([jobId, expires]) =>
      fc.record({
        jobId: fc.constant(jobId),
        expires: fc.constant(expires),
        // The last of 43 base64url characters carries 2 bits beyond the HMAC's 256: it is changed only below.
        at: fc.integer({ min: 0, max: String(expires).length + 1 + 41 }),
        to: characters,
        deleted: fc.boolean(),
      }),
    );
    await fc.assert(
      fc.asyncProperty(tokens, async ({ jobId, expires, at, to, deleted }) => {
        const token = await playbackToken(SECRET, jobId, expires);
        fc.pre(deleted || token[at] !== to);
        const changed = `${token.slice(0, at)}${deleted ? "" : to}${token.slice(at + 1)}`;
        const check = await checkPlaybackToken(SECRET, jobId, changed, expires * 1000 - 1);
        expect(check).toEqual({ valid: false, reason: WELL_FORMED.test(changed) ? NOT_SIGNED : MALFORMED });
      }),
      // A leading zero, by a change and by a deletion: rare draws, so always tried.
      {
        examples: [
          [{ jobId: randomUUID(), expires: 1_900_000_000, at: 0, to: "0", deleted: false }],
          [{ jobId: randomUUID(), expires: 1_000_000_000, at: 0, to: "0", deleted: true }],
        ],
      },
    );
  });

  it("a link has one spelling: any other last character, or a leading zero on the expiry, is refused", async () => {
    const jobId = randomUUID();
    const expires = 1_900_000_000;
    const token = await playbackToken(SECRET, jobId, expires);
    const now = expires * 1000 - 1;
    for (const character of BASE64URL) {
      if (character === token.at(-1)) continue;
      const check = await checkPlaybackToken(SECRET, jobId, `${token.slice(0, -1)}${character}`, now);
      expect(check.valid, character).toBe(false);
    }
    expect(await checkPlaybackToken(SECRET, jobId, `0${token}`, now)).toMatchObject({ valid: false });
    expect(await checkPlaybackToken(SECRET, jobId, token, now)).toMatchObject({ valid: true });
  });

  it("tokens that are not one: malformed", async () => {
    const jobId = randomUUID();
    const token = await playbackToken(SECRET, jobId, 1_900_000_000);
    const [expires, mac] = token.split(".");
    for (const bad of [
      "",
      ".",
      mac,
      expires,
      `${expires}.`,
      `.${mac}`,
      `${expires}.${mac}=`,
      `${expires}.${mac}.`,
      `${expires}.${mac.slice(0, 42)}`,
      `-${token}`,
      `1${"0".repeat(12)}.${mac}`,
      `${expires} .${mac}`,
      `${expires}.${mac.slice(0, 42)}+`,
      `${expires}.${mac.slice(0, 42)}/`,
    ]) {
      expect(await checkPlaybackToken(SECRET, jobId, bad, 0), bad).toEqual({ valid: false, reason: MALFORMED });
    }
  });

  it("a token signed with an expiry already past: signed, but expired", async () => {
    const jobId = randomUUID();
    const past = Math.floor(NOW.getTime() / 1000) - 1;
    const token = await playbackToken(SECRET, jobId, past);
    expect(await checkPlaybackToken(SECRET, jobId, token, NOW.getTime())).toEqual({ valid: false, reason: EXPIRED });
    expect(await checkPlaybackToken(SECRET, randomUUID(), token, NOW.getTime())).toEqual({
      valid: false,
      reason: NOT_SIGNED,
    });
  });
});

describe("playbackLink (docs/playback.md#the-link)", () => {
  const job = (preset: string, overrides: Partial<PlaybackFacts> = {}): PlaybackFacts => ({
    id: randomUUID(),
    status: "processing",
    preset,
    playableAt: new Date(NOW.getTime() - 5000),
    ...overrides,
  });

  it("a streaming preset's playable job: the path carries the job and a token for the plan's link lifetime", async () => {
    for (const [preset, entry] of [
      ["hls_abr_264_basic", "master.m3u8"],
      ["live_hls_264_lowlatency", "master.m3u8"],
      ["cmaf_abr_265_standard", "master.m3u8"],
      ["dash_abr_264_standard", "manifest.mpd"],
      ["live_dash_264_lowlatency", "manifest.mpd"],
    ]) {
      for (const status of ["processing", "completed", "queued"] as const) {
        const facts = job(preset, { status });
        const link = await playbackLink(ENV, facts, "free", NOW);
        const expires = Math.floor(NOW.getTime() / 1000) + LINK_TTL_SECONDS.free;
        expect(link?.expiresAt).toEqual(new Date(expires * 1000));
        const match = new RegExp(
          `^https://api\\.example\\.com/play/${facts.id}/(${expires}\\.[A-Za-z0-9_-]{43})/${entry.replace(".", "\\.")}$`,
        ).exec(link?.url ?? "");
        expect(match, `${preset} ${status}: ${link?.url}`).not.toBeNull();
        expect(await checkPlaybackToken(SECRET, facts.id, match?.[1] ?? "", NOW.getTime())).toEqual({
          valid: true,
          expires,
        });
      }
    }
  });

  it("each plan's link lifetime; the public URL's own path kept before /play", async () => {
    const facts = job("hls_abr_264_basic");
    const pro = await playbackLink(ENV, facts, "pro", NOW);
    expect(pro?.expiresAt.getTime()).toBe((Math.floor(NOW.getTime() / 1000) + 7 * 86_400) * 1000);
    const behind = await playbackLink({ ...ENV, PUBLIC_URL: "https://edge.example.com/video/" }, facts, "free", NOW);
    expect(behind?.url.startsWith(`https://edge.example.com/video/play/${facts.id}/`)).toBe(true);
  });

  it("null for a preset that is not a stream, a stream not playable yet, and a job failed or cancelled", async () => {
    expect(await playbackLink(ENV, job("mp4_264_720p"), "pro", NOW)).toBeNull();
    expect(await playbackLink(ENV, job("util_thumbnails"), "pro", NOW)).toBeNull();
    expect(await playbackLink(ENV, job("no_such_preset"), "pro", NOW)).toBeNull();
    expect(await playbackLink(ENV, job("hls_abr_264_basic", { playableAt: null }), "pro", NOW)).toBeNull();
    expect(
      await playbackLink(ENV, job("hls_abr_264_basic", { status: "completed", playableAt: null }), "pro", NOW),
    ).toBeNull();
    for (const status of ["failed", "cancelled"] as const) {
      expect(await playbackLink(ENV, job("dash_abr_264_standard", { status }), "pro", NOW), status).toBeNull();
    }
  });

  it("signed afresh on every read: another second, another token", async () => {
    const facts = job("hls_abr_264_basic");
    const first = await playbackLink(ENV, facts, "free", NOW);
    const later = await playbackLink(ENV, facts, "free", new Date(NOW.getTime() + 1000));
    expect(later?.url).not.toBe(first?.url);
    expect((later?.expiresAt.getTime() ?? 0) - (first?.expiresAt.getTime() ?? 0)).toBe(1000);
  });

  it("playbackLinks: each job's link, in order", async () => {
    const jobs = [job("hls_abr_264_basic"), job("mp4_264_720p"), job("dash_abr_264_standard", { status: "failed" })];
    const links = await playbackLinks(ENV, jobs, "free", NOW);
    expect(links).toEqual(await Promise.all(jobs.map((j) => playbackLink(ENV, j, "free", NOW))));
    expect(links.map((l) => l !== null)).toEqual([true, false, false]);
  });
});
