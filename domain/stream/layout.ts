/**
 * A streaming output as it is stored and served (docs/playback.md): one folder per rendition
 * (each video rung, and the audio), each holding its segments (and, for fMP4, its init segment),
 * under the job's stream prefix. The playlists and the MPD are not stored while the job runs:
 * the Worker writes them from the segments recorded so far, and the ZIP carries the same at the
 * end. Pure, so the Worker, the encoder and the tests share it.
 */
import { findDefinition } from "../presets/definitions";
import { HLS_MASTER_PLAYLIST, type LadderRecipe, type Rung, selectRungs } from "../presets/recipes";

export const DASH_MANIFEST = "manifest.mpd";
export const MEDIA_PLAYLIST = "index.m3u8";
export const INIT_SEGMENT = "init.mp4";
/** The folder of the one audio rendition: every video rung shares it. */
export const AUDIO_RENDITION = "audio";

/**
 * Every timestamp of a stream is the source's clock moved so that its first video frame sits
 * here, on every part alike: past any encoder's reordering delay, so that no part's first
 * timestamps go negative and are shifted by the muxer (which would differ between parts).
 */
export const MEDIA_OFFSET_SECONDS = 10;

export interface StreamRendition {
  /** Its folder under the stream: the rung's height ("1080p") or AUDIO_RENDITION. */
  name: string;
  kind: "video" | "audio";
  /** Peak bits per second (a video rung's VBV maxrate; an audio rendition's bitrate). */
  bandwidth: number;
  /** Mean bits per second. */
  averageBandwidth: number;
  width?: number;
  height?: number;
  /** Frames per second, exactly, as "30000/1001". */
  frameRate?: string;
}

export interface StreamLayout {
  segmentType: "mpegts" | "fmp4";
  /** What the playback link opens: HLS's master playlist (`hls`, `cmaf`) or the MPD (`dash`); `cmaf` offers both. */
  manifest: "hls" | "dash" | "cmaf";
  /** Nominal segment length in seconds: HLS's EXT-X-TARGETDURATION, fixed for the stream's life. */
  segmentSeconds: number;
  /** Whether each HLS segment carries EXT-X-PROGRAM-DATE-TIME (the live presets, for latency tracking). */
  programDateTime: boolean;
  renditions: StreamRendition[];
}

/** Whether a preset's output is a stream: every ladder (`hls_*`, `dash_*`, `cmaf_*`, `live_*`). */
export function streamRecipe(presetId: string): LadderRecipe | null {
  const recipe = findDefinition(presetId)?.recipe;
  return recipe?.kind === "ladder" ? recipe : null;
}

/** The file the playback link names: the HLS master playlist, or the MPD of a DASH preset. */
export function entryMemberOf(recipe: LadderRecipe): string {
  return recipe.packaging.format === "dash" ? DASH_MANIFEST : HLS_MASTER_PLAYLIST;
}

export const segmentTypeOf = (recipe: LadderRecipe): StreamLayout["segmentType"] =>
  recipe.packaging.format === "hls" ? recipe.packaging.segmentType : "fmp4";

export const segmentExtension = (type: StreamLayout["segmentType"]) => (type === "mpegts" ? "ts" : "m4s");

/** Segment `index` of a rendition, as stored and as the playlists name it. */
export const segmentName = (index: number, type: StreamLayout["segmentType"]) =>
  `seg_${String(index).padStart(5, "0")}.${segmentExtension(type)}`;

export const renditionName = (rung: Pick<Rung, "height">) => `${rung.height}p`;

/** Everything of a job's stream in storage, beside its ZIP. */
export const streamPrefix = (accountId: string, jobId: string) => `outputs/${accountId}/${jobId}/stream/`;

/** The kept rungs of a ladder for a source of this height, highest first: one video rendition each. */
export const streamRungs = (recipe: LadderRecipe, sourceHeight: number) => selectRungs(recipe.rungs, sourceHeight);

/** A picture `height` high scaled from `source` as the ladder's `scale=-2:height` does: the aspect kept, the width even. */
function scaledWidth(source: { width: number; height: number }, height: number): number {
  return Math.max(2, 2 * Math.round((height * source.width) / source.height / 2));
}

/**
 * The layout of a ladder's stream for a source: its kept rungs, then its audio when it has any.
 * Their codecs strings are read off their first segments as they are made (stored with them).
 */
export function streamLayout(
  recipe: LadderRecipe,
  source: { width: number; height: number; frameRate: string; hasAudio: boolean },
): StreamLayout {
  const rungs = streamRungs(recipe, source.height);
  const { packaging } = recipe;
  const video: StreamRendition[] = rungs.map((rung) => ({
    name: renditionName(rung),
    kind: "video",
    bandwidth: rung.maxrate * 1000,
    averageBandwidth: rung.videoBitrate * 1000,
    width: scaledWidth(source, rung.height),
    height: rung.height,
    frameRate: source.frameRate,
  }));
  const audioBitrate = rungs[0].audioBitrate * 1000;
  const audio: StreamRendition[] = source.hasAudio
    ? [
        {
          name: AUDIO_RENDITION,
          kind: "audio",
          bandwidth: audioBitrate,
          averageBandwidth: audioBitrate,
        },
      ]
    : [];
  return {
    segmentType: segmentTypeOf(recipe),
    manifest: packaging.format,
    segmentSeconds: packaging.segmentSeconds,
    programDateTime: packaging.format === "hls" && packaging.playlist === "event",
    renditions: [...video, ...audio],
  };
}

/** What a name under a stream's link is: a manifest, a media playlist, an init segment or a segment. */
export type StreamMember =
  | { kind: "master" }
  | { kind: "mpd" }
  | { kind: "playlist"; rendition: string }
  | { kind: "init"; rendition: string }
  | { kind: "segment"; rendition: string; index: number };

const RENDITION = /^(\d{1,5}p|audio)$/;
const SEGMENT = /^seg_(\d{5,9})\.(ts|m4s)$/;

/**
 * The member `path` names in a stream of this layout, or null for anything else (another
 * rendition, another segment type, a manifest the layout does not offer, `..`, a second slash).
 */
export function parseMember(layout: StreamLayout, path: string): StreamMember | null {
  if (path === HLS_MASTER_PLAYLIST) return layout.manifest === "dash" ? null : { kind: "master" };
  if (path === DASH_MANIFEST) return layout.manifest === "hls" ? null : { kind: "mpd" };
  const [rendition, file, ...rest] = path.split("/");
  if (rest.length > 0 || !rendition || !file || !RENDITION.test(rendition)) return null;
  if (!layout.renditions.some((r) => r.name === rendition)) return null;
  if (file === MEDIA_PLAYLIST) return layout.manifest === "dash" ? null : { kind: "playlist", rendition };
  if (file === INIT_SEGMENT) return layout.segmentType === "fmp4" ? { kind: "init", rendition } : null;
  const segment = SEGMENT.exec(file);
  if (!segment || segment[2] !== segmentExtension(layout.segmentType)) return null;
  const index = Number(segment[1]);
  return segmentName(index, layout.segmentType) === file ? { kind: "segment", rendition, index } : null;
}
