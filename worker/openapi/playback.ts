/**
 * The playback route as the reference shows it (docs/playback.md): outside /api/v1 (its server is
 * the host's root), no key, a signature in the path, media and playlists in its answers.
 */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { ApiError } from "../errors";
import { EXAMPLE_JOB_IDS } from "../routes/jobs/examples";
import { jsonResponse } from "./common";
import { ForbiddenError, MethodNotAllowedError, NotFoundError } from "./errors";

const media = (description: string) => ({
  description,
  content: Object.fromEntries(
    ["application/vnd.apple.mpegurl", "application/dash+xml", "video/mp2t", "video/mp4", "audio/mp4"].map((type) => [
      type,
      { schema: z.string().openapi({ format: "binary" }) },
    ]),
  ),
});

const params = z.object({
  jobId: z.uuid().openapi({ param: { name: "jobId", in: "path" }, example: EXAMPLE_JOB_IDS.processing }),
  token: z.string().openapi({
    param: { name: "token", in: "path" },
    description: "`<expires>.<signature>`, as the job's playbackUrl gives it.",
    example: "1795254792.q0N9mD0d3k6r5v2W8tYpZx1cB4nF7hJ2sL3aE5gQ9uM",
  }),
  member: z.string().openapi({
    param: { name: "member", in: "path" },
    description:
      "A member of the stream: `master.m3u8`, `manifest.mpd`, or `<rendition>/index.m3u8`, `<rendition>/init.mp4`, `<rendition>/seg_<n>.<ts|m4s>` (the one `/` in it sent as is).",
    example: "master.m3u8",
  }),
});

const playbackRoute = createRoute({
  method: "get",
  path: "/play/{jobId}/{token}/{member}",
  servers: [{ url: "/", description: "The host's root: the stream is not under /api/v1" }],
  tags: ["Playback"],
  operationId: "playStream",
  summary: "Play a streaming job's output",
  description:
    "Serves a streaming job's stream from storage, under the signed path its `playbackUrl` gives: playlists (EVENT while the job runs, VOD once it completed) and MPDs written from the segments stored so far, segments with byte ranges. No key: the signature authorizes the whole tree of one job until it expires. CORS allows any origin; segments are cacheable for as long as the link lives, a growing playlist never. HEAD is answered as GET without a body.",
  security: [],
  request: { params },
  responses: {
    200: media("The member: a playlist or manifest, or a segment."),
    206: media("The byte range asked for (`Range`), with `Content-Range`."),
    403: jsonResponse("The signature is tampered, expired, or another job's.", ForbiddenError, {
      expired: { summary: "Expired", value: ApiError.forbidden("The playback link has expired.").body },
    }),
    404: jsonResponse(
      "Not a member of this stream, a segment not stored yet, or the stream of a job that failed or was cancelled (its segments deleted).",
      NotFoundError,
      { notMember: { summary: "Not a member", value: ApiError.notFound("No such member of this stream").body } },
    ),
    405: jsonResponse("A method other than GET, HEAD or OPTIONS.", MethodNotAllowedError, {
      post: { summary: "POST", value: ApiError.methodNotAllowed(["GET", "HEAD", "OPTIONS"]).body },
    }),
  },
});

export function registerPlaybackDocument(registry: OpenAPIHono["openAPIRegistry"]): void {
  registry.registerPath(playbackRoute);
}
