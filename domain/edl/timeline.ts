/** `timeline.tracks`: track types, the single video track, clip id uniqueness, overlaps, features. */
import { readCaptionClip } from "./caption-clip";
import { type ClipReading, readOverlayClip, readTextClip, readVideoClip } from "./clips";
import { fieldPath, type Issues, isObject, type JsonObject, own } from "./fields";
import { fieldsOf, list, oneOf } from "./kinds";
import { EDL_LIMITS } from "./limits";
import {
  APPLIED_FEATURES,
  type CaptionClip,
  type Clip,
  type EdlFeature,
  type EdlVersion,
  type OverlayClip,
  type TextClip,
  type Track,
  TRACK_TYPES,
  TRACK_TYPES_1_1,
  UNAPPLIED_FEATURES,
  type VideoClip,
} from "./validated-edl";
import { readTransitions, type TransitionReading } from "./transitions";

interface Entry<C extends Clip> {
  /** The clip's id when it has one, else its index: what warnings call it. */
  label: string;
  path: string;
  reading: ClipReading<C>;
}

/** One entry of `timeline.tracks`, read as far as its shape allows. */
type TrackReading = {
  index: number;
  /** Every element of `clips`, malformed ones included: they still count toward the plan's limit. */
  clipCount: number;
} & (
  | { type: "video"; clips: Entry<VideoClip>[] }
  | { type: "overlay"; clips: Entry<OverlayClip>[] }
  | { type: "text"; clips: Entry<TextClip>[] }
  | { type: "caption"; clips: Entry<CaptionClip>[] }
  | { type: undefined; clips: [] }
);

export interface TimelineReading {
  tracks: TrackReading[];
  /**
   * 1.0: the accepted-but-not-applied properties used anywhere, in `UNAPPLIED_FEATURES` order;
   * 1.1: what the timeline applies, in `APPLIED_FEATURES` order.
   */
  features: EdlFeature[];
  /** The video track's transitions (1.1). */
  transitions?: Omit<TransitionReading, "joined">;
  /** The validated tracks; absent when any track or clip is invalid. */
  validTracks?: Track[];
}

/** What reading one track needs from the rest of the timeline. */
interface Context {
  issues: Issues;
  version: EdlVersion;
  /** Clip ids seen so far and where, so a duplicate's error can point at the first use. */
  ids: Map<string, string>;
  features: Set<EdlFeature>;
}

function readClips<C extends Clip>(
  raws: unknown[],
  path: string,
  read: ((source: JsonObject, path: string, issues: Issues, version: EdlVersion) => ClipReading<C>) | undefined,
  { issues, version, ids, features }: Context,
): Entry<C>[] {
  const entries: Entry<C>[] = [];
  raws.forEach((raw, j) => {
    const clipPath = fieldPath(path, j);
    if (!isObject(raw)) {
      issues.errors.push(`${clipPath}: must be an object`);
      return;
    }
    if (version === "1.0") {
      for (const name of UNAPPLIED_FEATURES) {
        if (own(raw, name) !== undefined) features.add(name);
      }
    }
    const rawId = own(raw, "id");
    const id = typeof rawId === "string" && rawId.trim() !== "" ? rawId : undefined;
    if (id !== undefined) {
      const firstUse = ids.get(id);
      if (firstUse)
        issues.errors.push(`${clipPath}.id: "${id}" is already used by ${firstUse}; clip ids must be unique`);
      else ids.set(id, clipPath);
    }
    // Without a known track type there is no table to check the clip's fields against.
    if (!read) return;
    const reading = read(raw, clipPath, issues, version);
    for (const name of reading.features) features.add(name);
    entries.push({ label: id ?? `clips[${j}]`, path: clipPath, reading });
  });
  return entries;
}

function readTrack(raw: unknown, index: number, context: Context): TrackReading {
  const path = fieldPath("timeline.tracks", index);
  if (!isObject(raw)) {
    context.issues.errors.push(`${path}: must be an object`);
    return { index, clipCount: 0, type: undefined, clips: [] };
  }
  const f = fieldsOf(raw, path, context.issues);
  const type = f.readAs("type", oneOf(context.version === "1.1" ? TRACK_TYPES_1_1 : TRACK_TYPES), true);
  const raws = f.readAs("clips", list(), true) ?? [];
  const clipsPath = f.path("clips");
  const base = { index, clipCount: raws.length };
  switch (type) {
    case "video":
      return { ...base, type, clips: readClips(raws, clipsPath, readVideoClip, context) };
    case "overlay":
      return { ...base, type, clips: readClips(raws, clipsPath, readOverlayClip, context) };
    case "text":
      return { ...base, type, clips: readClips(raws, clipsPath, readTextClip, context) };
    case "caption":
      return { ...base, type, clips: readClips(raws, clipsPath, readCaptionClip, context) };
    default:
      readClips(raws, clipsPath, undefined, context);
      return { ...base, type: undefined, clips: [] };
  }
}

/**
 * The compiler lays the video track out as one concatenated sequence, so there is exactly one,
 * and an output needs at least one clip on it. Several video tracks have no meaning in the
 * contract (no layering rule for them), hence an error rather than a guess.
 */
function checkVideoTrack(tracks: TrackReading[], errors: string[]): void {
  const video = tracks.filter((t) => t.type === "video");
  if (video.length === 0) {
    errors.push("timeline.tracks: must include a video track with at least one clip");
    return;
  }
  if (video[0].clipCount === 0) {
    errors.push(`timeline.tracks[${video[0].index}].clips: the video track must have at least one clip`);
  }
  for (const extra of video.slice(1)) {
    errors.push(`timeline.tracks[${extra.index}].type: only one video track is allowed`);
  }
}

/**
 * One warning per clip that starts before an earlier clip on its track has ended (touching
 * ends are fine). Each is paired with the clip that reaches furthest so far, so three clips on
 * top of each other give two warnings, not three.
 */
function overlapWarnings(track: TrackReading, joined: Map<Entry<Clip>, Entry<Clip>>): string[] {
  const timed = (track.clips as Entry<Clip>[])
    .flatMap((entry) => (entry.reading.span ? [{ entry, label: entry.label, ...entry.reading.span }] : []))
    .sort((a, b) => a.start - b.start);
  const warnings: string[] = [];
  let furthest: (typeof timed)[number] | undefined;
  for (const clip of timed) {
    // Two clips a transition joins overlap by design (1.1).
    if (furthest && clip.start < furthest.end && joined.get(clip.entry) !== furthest.entry) {
      warnings.push(`Track ${track.index} (${track.type}) has overlapping clips: ${furthest.label} and ${clip.label}`);
    }
    if (!furthest || clip.end > furthest.end) furthest = clip;
  }
  return warnings;
}

function completeClips<C extends Clip>(entries: Entry<C>[]): C[] | undefined {
  const clips = entries.map((e) => e.reading.clip);
  return clips.every((c) => c !== undefined) ? (clips as C[]) : undefined;
}

function completeTrack(track: TrackReading): Track | undefined {
  switch (track.type) {
    case "video": {
      const clips = completeClips(track.clips);
      return clips && { type: track.type, clips };
    }
    case "overlay": {
      const clips = completeClips(track.clips);
      return clips && { type: track.type, clips };
    }
    case "text": {
      const clips = completeClips(track.clips);
      return clips && { type: track.type, clips };
    }
    case "caption": {
      const clips = completeClips(track.clips);
      return clips && { type: track.type, clips };
    }
    default:
      return undefined;
  }
}

/**
 * The most tracks and clips any plan allows. A timeline beyond them is judged on its counts
 * alone: the plan-limit errors say what is wrong with it, while reading 100,000 clips one by one
 * (each malformed one adding its own errors to the answer) would cost seconds of CPU and a
 * response of megabytes for nothing more.
 */
export const READ_CEILING = {
  tracks: Math.max(...Object.values(EDL_LIMITS).map((l) => l.tracks)),
  clips: Math.max(...Object.values(EDL_LIMITS).map((l) => l.clips)),
};

function clipCountOf(track: unknown): number {
  const clips = isObject(track) ? own(track, "clips") : undefined;
  return Array.isArray(clips) ? clips.length : 0;
}

/** Each track counted, none read: what the stats and limit errors of an oversized timeline need. */
function countedOnly(raws: unknown[]): TimelineReading | undefined {
  const counts = raws.map(clipCountOf);
  const clips = counts.reduce((sum, n) => sum + n, 0);
  if (raws.length <= READ_CEILING.tracks && clips <= READ_CEILING.clips) return undefined;
  return { tracks: counts.map((clipCount, index) => ({ index, clipCount, type: undefined, clips: [] })), features: [] };
}

/** The order `stats.features` lists them in, by version. */
const FEATURE_ORDER: Record<EdlVersion, readonly EdlFeature[]> = { "1.0": UNAPPLIED_FEATURES, "1.1": APPLIED_FEATURES };

export function readTimeline(
  value: unknown,
  issues: Issues,
  version: EdlVersion,
  fps: number | undefined,
): TimelineReading {
  const empty: TimelineReading = { tracks: [], features: [] };
  if (value === undefined || value === null) {
    issues.errors.push("timeline: is required");
    return empty;
  }
  if (!isObject(value)) {
    issues.errors.push("timeline: must be an object");
    return empty;
  }
  const raws = fieldsOf(value, "timeline", issues).readAs("tracks", list(), true);
  if (!raws) return empty;
  const oversized = countedOnly(raws);
  if (oversized) return oversized;

  const context: Context = { issues, version, ids: new Map(), features: new Set() };
  const tracks = raws.map((raw, i) => readTrack(raw, i, context));
  checkVideoTrack(tracks, issues.errors);
  // filter, not find: a sparse tracks array (not JSON, but a value validateEdl is given) has holes.
  const video = tracks.filter((t) => t.type === "video")[0];
  const transitions = version === "1.1" && video ? readTransitions(video.clips, fps, issues.errors) : undefined;
  const joined = (transitions?.joined ?? new Map()) as Map<Entry<Clip>, Entry<Clip>>;
  // One push per warning: spreading a huge list into push() overflows the argument stack.
  for (const warning of tracks.flatMap((t) => overlapWarnings(t, joined))) issues.warnings.push(warning);

  const completed = tracks.map(completeTrack);
  const validTracks = completed.every((t): t is Track => t !== undefined) ? completed : undefined;
  return {
    tracks,
    features: FEATURE_ORDER[version].filter((name) => context.features.has(name)),
    ...(transitions && { transitions: { xfades: transitions.xfades, overlap: transitions.overlap } }),
    ...(validTracks && { validTracks }),
  };
}
