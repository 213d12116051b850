import type { Job } from "../../../drizzle/schema";
import { findDefinition } from "../../../domain/presets/definitions";
import { HLS_MASTER_PLAYLIST } from "../../../domain/presets/recipes";
import { DASH_MANIFEST, entryMemberOf, streamRecipe } from "../../../domain/stream/layout";
import { signableKey, type OutputFacts } from "../../lib/output-links";

/**
 * How the dashboard can show a finished job's output: a browser plays single MP4/WebM/MOV
 * files and audio files itself; an HLS ladder (ZIP in storage) plays through hls.js from its
 * members served one by one; anything else (DASH, images, subtitles) is download only.
 */
export type Playback = { kind: "video" } | { kind: "audio" } | { kind: "hls"; master: string } | { kind: "none" };

const VIDEO_EXTENSIONS = new Set(["mp4", "webm", "mov"]);
const AUDIO_EXTENSIONS = new Set(["m4a", "mp3"]);

function outputExtension(outputKey: string | null): string | null {
  const match = outputKey ? /\.([a-z0-9]+)$/i.exec(outputKey) : null;
  return match ? match[1].toLowerCase() : null;
}

/** The key of a job's output the Worker may read for the page: the one the API would sign, or null. */
export function readableOutputKey(job: OutputFacts | undefined): string | null {
  const key = job && signableKey(job);
  return typeof key === "string" ? key : null;
}

export function playbackOf(job: Pick<Job, "status" | "outputKey" | "preset" | "storageLayout">): Playback {
  if (readableOutputKey(job) === null) return { kind: "none" };
  const extension = outputExtension(job.outputKey);
  if (extension && VIDEO_EXTENSIONS.has(extension)) return { kind: "video" };
  if (extension && AUDIO_EXTENSIONS.has(extension)) return { kind: "audio" };
  const recipe = findDefinition(job.preset)?.recipe;
  if (
    extension === "zip" &&
    recipe?.kind === "ladder" &&
    (recipe.packaging.format === "hls" || recipe.packaging.format === "cmaf")
  ) {
    return { kind: "hls", master: HLS_MASTER_PLAYLIST };
  }
  return { kind: "none" };
}

/**
 * How the page plays a streaming job's playback link (docs/playback.md): hls.js (or Safari
 * itself) for an HLS master playlist, dash.js for an MPD. Null for a preset that is not a stream.
 */
export function streamPlayerOf(preset: string): "hls" | "dash" | null {
  const recipe = streamRecipe(preset);
  if (!recipe) return null;
  return entryMemberOf(recipe) === DASH_MANIFEST ? "dash" : "hls";
}

/**
 * A playback link as the page loads it: its path, on the page's own origin. The same Worker
 * serves it there, and the page's Content-Security-Policy lets players fetch from no other.
 */
export const onThisOrigin = (url: string) => new URL(url).pathname;

/** Content types for the members of output ZIPs that the page fetches; the rest download as bytes. */
const MEMBER_TYPES: Record<string, string> = {
  m3u8: "application/vnd.apple.mpegurl",
  ts: "video/mp2t",
  m4s: "video/iso.segment",
  mp4: "video/mp4",
  m4a: "audio/mp4",
  mpd: "application/dash+xml",
  jpg: "image/jpeg",
  vtt: "text/vtt",
};

export function memberContentType(name: string): string {
  return MEMBER_TYPES[outputExtension(name) ?? ""] ?? "application/octet-stream";
}
