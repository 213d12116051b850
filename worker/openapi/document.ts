import { registerEdlDocument } from "../routes/edl/document";
import { publicApi } from "../routes/public-api";
import { BEARER } from "./common";
import { registerPlaybackDocument } from "./playback";
import { jobFinishedWebhook, jobPlayableWebhook } from "./webhooks";

const DESCRIPTION = `
Encode a video from a URL with one of 23 presets, or assemble a timeline (EDL) of clips, images
and text into one file. Jobs run asynchronously: create one, poll it (every 10–15 seconds) or
wait for the webhook, then download the output through a signed link that needs no key.

**Authentication.** Send \`Authorization: Bearer <key>\` (keys start with \`spk_\`, or \`sk_\` for
older ones). Only \`GET /presets\` works without a key.

**Errors.** Error bodies carry \`message\` (for a person) and usually \`error\` (the class of
problem); \`GET /jobs/{id}/download-url\` answers a bare \`{message}\`. Read \`message\` first and
treat \`error\` as optional. A \`500\` is safe to retry with backoff; a \`429\` is the monthly quota,
not a rate limit, and retrying does not help until the month rolls over or the plan changes.

**Retries without duplicates.** \`POST /jobs\` and \`POST /edl\` take an optional
\`Idempotency-Key\` header: a retry with the same key and body within 24 hours replays the first
answer instead of creating a second job.

**Uploads.** A file you hold rather than host: \`POST /uploads\` answers presigned URLs to put
it into the service's storage, and an \`inputUrl\` a job takes as its source.

**Playback.** A streaming preset's job gives a \`playbackUrl\` while it is still processing: any
player opens it as it is, with no key (\`GET /play/{jobId}/{token}/{member}\`, outside /api/v1).

**Links** in responses are paths relative to the host.
`.trim();

/**
 * The OpenAPI 3.1 document of /api/v1, generated from the schemas the routes validate and answer
 * with. Paths are relative to the server `/api/v1`, as in the contract.
 */
export function openApiDocument() {
  const api = publicApi();
  registerEdlDocument(api.openAPIRegistry);
  registerPlaybackDocument(api.openAPIRegistry);
  api.openAPIRegistry.registerComponent("securitySchemes", BEARER, {
    type: "http",
    scheme: "bearer",
    description: "An API key: `spk_…` (or a legacy `sk_…`).",
  });
  api.openAPIRegistry.registerWebhook(jobFinishedWebhook);
  api.openAPIRegistry.registerWebhook(jobPlayableWebhook);
  return api.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "Video encoding API", version: "1.0.0", description: DESCRIPTION },
    servers: [{ url: "/api/v1", description: "This service" }],
    tags: [
      { name: "Jobs", description: "Encode one source with one preset; read, list, cancel, download." },
      { name: "Timelines (EDL)", description: "Validate a timeline, or render it as a job." },
      {
        name: "Uploads",
        description:
          "Put a file into the service's storage with presigned URLs; its `inputUrl` is then a job's source.",
      },
      { name: "Presets", description: "The catalogue and what your plan includes." },
      {
        name: "Playback",
        description: "A streaming job's stream, played from its signed playbackUrl while it encodes (outside /api/v1).",
      },
      { name: "Webhooks", description: "What the service sends to your webhook." },
    ],
  });
}
