/**
 * Playback links (docs/playback.md#the-link): one signature with an expiry authorizes the whole
 * tree of one job's stream, and it sits in the path, `/play/<job>/<expires>.<signature>/<member>`,
 * so the relative URIs of the playlists keep it and any player plays the link as it is. The key
 * is derived from INTERNAL_SECRET for this use alone.
 */
import type { Job } from "../../drizzle/schema";
import type { JobStatus } from "../../domain/jobs";
import { LINK_TTL_SECONDS, type PlanId } from "../../domain/plans";
import { entryMemberOf, streamRecipe } from "../../domain/stream/layout";
import { routeUrl } from "../../domain/urls";
import type { Env } from "../env";

/** Where the Worker serves streams: outside /api/v1, as the links are not the API's. */
export const PLAY_PATH = "/play";

const encoder = new TextEncoder();
const KEY_LABEL = "playback links v1";

const keys = new Map<string, Promise<CryptoKey>>();

/** The HMAC key of playback links: HMAC(INTERNAL_SECRET, label), so a link's signature says nothing of the secret's other uses. */
function playbackKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = (async () => {
      const root = await crypto.subtle.importKey(
        "raw",
        encoder.encode(secret),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"],
      );
      const derived = await crypto.subtle.sign("HMAC", root, encoder.encode(KEY_LABEL));
      return crypto.subtle.importKey("raw", derived, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    })();
    keys.set(secret, key);
  }
  return key;
}

const base64url = (bytes: ArrayBuffer) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

function fromBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) return null;
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

const signedText = (jobId: string, expires: number) => encoder.encode(`${jobId}.${expires}`);

/** The path segment that authorizes `jobId`'s stream until `expires` (seconds since the epoch). */
export async function playbackToken(secret: string, jobId: string, expires: number): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await playbackKey(secret), signedText(jobId, expires));
  return `${expires}.${base64url(mac)}`;
}

export type TokenCheck = { valid: true; expires: number } | { valid: false; reason: string };

/** Whether `token` authorizes `jobId`'s stream now: signed with this secret, for this job, not expired. */
export async function checkPlaybackToken(
  secret: string,
  jobId: string,
  token: string,
  now = Date.now(),
): Promise<TokenCheck> {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]+)$/.exec(token);
  const mac = match && fromBase64url(match[2]);
  // One spelling a link: no leading zero, no last character whose spare bits differ.
  if (!match || !mac || String(Number(match[1])) !== match[1] || base64url(mac.buffer) !== match[2])
    return { valid: false, reason: "The playback link is malformed." };
  const expires = Number(match[1]);
  const signed = await crypto.subtle.verify("HMAC", await playbackKey(secret), mac, signedText(jobId, expires));
  if (!signed) return { valid: false, reason: "The playback link's signature is not valid for this job." };
  if (expires * 1000 <= now) return { valid: false, reason: "The playback link has expired." };
  return { valid: true, expires };
}

export interface PlaybackLink {
  url: string;
  expiresAt: Date;
}

/**
 * A failed or cancelled job's stream is deleted with it. A playable job queued again for a retry
 * keeps its stream: the retry stores the same segments, and those listed stay as they were.
 */
export const streamGone = (status: JobStatus) => status === "failed" || status === "cancelled";

/** What a playback link is decided on. */
export type PlaybackFacts = Pick<Job, "id" | "status" | "preset" | "playableAt">;

/**
 * The job's playback link, signed afresh for the plan's link lifetime, or null: a preset that is
 * not a stream, a stream not playable yet, a job that failed or was cancelled.
 */
export async function playbackLinks(
  env: Pick<Env, "INTERNAL_SECRET" | "PUBLIC_URL">,
  jobs: readonly PlaybackFacts[],
  plan: PlanId,
  now = new Date(),
): Promise<(PlaybackLink | null)[]> {
  return Promise.all(jobs.map((job) => playbackLink(env, job, plan, now)));
}

/** playbackLinks for one job. */
export async function playbackLink(
  env: Pick<Env, "INTERNAL_SECRET" | "PUBLIC_URL">,
  job: PlaybackFacts,
  plan: PlanId,
  now = new Date(),
): Promise<PlaybackLink | null> {
  const recipe = streamRecipe(job.preset);
  if (!recipe || !job.playableAt || streamGone(job.status)) return null;
  const expires = Math.floor(now.getTime() / 1000) + LINK_TTL_SECONDS[plan];
  const token = await playbackToken(env.INTERNAL_SECRET, job.id, expires);
  return {
    url: routeUrl(env.PUBLIC_URL, `${PLAY_PATH}/${job.id}/${token}/${entryMemberOf(recipe)}`),
    expiresAt: new Date(expires * 1000),
  };
}
