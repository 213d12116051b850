import { Hono } from "hono";
import { cors } from "hono/cors";
import { mpd } from "../../../domain/stream/dash";
import { masterPlaylist, mediaPlaylist } from "../../../domain/stream/hls";
import { parseMember, type StreamMember, streamPrefix } from "../../../domain/stream/layout";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { checkPlaybackToken, streamGone } from "../../lib/playback-links";
import { segmentRuns } from "../../lib/stream-segments";
import { type StreamJob, streamJob } from "../../lib/stream-reads";
import type { Services } from "../../services";

const METHODS = ["GET", "HEAD", "OPTIONS"] as const;
/** A segment never changes once stored: cached as long as the link that names it lives, up to a year. */
const SEGMENT_MAX_AGE = 365 * 24 * 60 * 60;
/** A finished stream's playlists no longer change either, but a day is enough for a player to be told. */
const FINISHED_PLAYLIST_MAX_AGE = 24 * 60 * 60;

const TYPES = {
  m3u8: "application/vnd.apple.mpegurl",
  mpd: "application/dash+xml",
  ts: "video/mp2t",
  video: "video/mp4",
  audio: "audio/mp4",
} as const;

/** The path after `/play/<job>/<token>/`, as sent (still percent-encoded: `%2F` or `%2e%2e` names no member). */
function memberPath(url: string): string {
  const path = new URL(url).pathname;
  return path.split("/").slice(4).join("/");
}

/** The stream's manifests and playlists, written from the segments recorded so far. */
async function manifest(services: Services, job: StreamJob, member: StreamMember, now: Date): Promise<string> {
  const layout = job.stream;
  if (!layout) throw ApiError.notFound("No such stream");
  const runs = await segmentRuns(services.db, job.id);
  const ended = job.status === "completed";
  if (member.kind === "master")
    return masterPlaylist(
      layout,
      new Map([...runs].flatMap(([name, run]) => (run.codecs ? [[name, run.codecs]] : []))),
    );
  if (member.kind === "mpd") {
    const segments = new Map(
      [...runs].map(([name, run]) => [
        name,
        { codecs: run.codecs ?? "", start: run.start ?? undefined, durations: run.durations },
      ]),
    );
    return mpd(layout, segments, { ended, startedAt: job.playableAt ?? now, now });
  }
  if (member.kind !== "playlist") throw ApiError.notFound("No such stream member");
  return mediaPlaylist(layout, runs.get(member.rendition)?.durations ?? [], {
    ended,
    startedAt: job.startedAt ?? undefined,
  });
}

/**
 * A job's stream from storage (docs/playback.md): every member under one signed path, any origin
 * (CORS for GET and HEAD), byte ranges on the media, the media cacheable for as long as the link
 * lives, a growing playlist never.
 */
export const play = new Hono<AppEnv>()
  .use(
    "*",
    cors({
      origin: "*",
      allowMethods: [...METHODS],
      allowHeaders: ["Range", "If-None-Match"],
      exposeHeaders: ["Content-Length", "Content-Range", "Accept-Ranges", "ETag"],
      maxAge: 86400,
    }),
  )
  .on(["GET", "HEAD"], "/:jobId/:token/*", async (c) => {
    const services = c.get("services");
    const now = new Date();
    const { jobId, token } = c.req.param();
    const check = await checkPlaybackToken(services.env.INTERNAL_SECRET, jobId, token, now.getTime());
    if (!check.valid) throw ApiError.forbidden(check.reason);
    const job = await streamJob(services.db, jobId);
    if (!job?.stream || !job.playableAt || streamGone(job.status)) throw ApiError.notFound("No such stream");
    const member = parseMember(job.stream, memberPath(c.req.url));
    if (!member) throw ApiError.notFound("No such member of this stream");
    const linkSeconds = Math.max(0, check.expires - Math.floor(now.getTime() / 1000));
    if (member.kind === "init" || member.kind === "segment") {
      const path = memberPath(c.req.url);
      const stored = await services.storage.read(`${streamPrefix(job.accountId, job.id)}${path}`, {
        method: c.req.method === "HEAD" ? "HEAD" : "GET",
        range: c.req.header("range"),
        ifNoneMatch: c.req.header("if-none-match"),
      });
      if (stored.status === 404) {
        await stored.body?.cancel();
        throw ApiError.notFound("This segment is not stored yet");
      }
      const headers = new Headers({
        "content-type":
          member.kind === "segment" && job.stream.segmentType === "mpegts"
            ? TYPES.ts
            : job.stream.renditions.find((r) => r.name === member.rendition)?.kind === "audio"
              ? TYPES.audio
              : TYPES.video,
        "cache-control": `public, max-age=${Math.min(linkSeconds, SEGMENT_MAX_AGE)}, immutable`,
        "accept-ranges": "bytes",
      });
      for (const name of ["content-length", "content-range", "etag", "last-modified"]) {
        const value = stored.headers.get(name);
        if (value) headers.set(name, value);
      }
      return new Response(c.req.method === "HEAD" ? null : stored.body, { status: stored.status, headers });
    }
    const text = await manifest(services, job, member, now);
    const cacheControl =
      job.status === "completed" ? `public, max-age=${Math.min(linkSeconds, FINISHED_PLAYLIST_MAX_AGE)}` : "no-store";
    const headers = { "content-type": member.kind === "mpd" ? TYPES.mpd : TYPES.m3u8, "cache-control": cacheControl };
    return c.req.method === "HEAD" ? c.body(null, 200, headers) : c.body(text, 200, headers);
  })
  .all("*", (c) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") throw ApiError.notFound("No such stream");
    throw ApiError.methodNotAllowed(METHODS);
  });
