import { findDefinition } from "../../domain/presets/definitions";
import type { ProgressiveRecipe } from "../../domain/presets/recipes";
import { MAX_PARTS, type SplitPart, type SplitPlan } from "../../domain/split";
import type { ProbeSummary } from "../ffmpeg/probe";
import type { SplitFacts } from "./facts";

export interface SplitSettings {
  /** Sources longer than this split (SPLIT_MIN_SECONDS). */
  minSeconds: number;
  /** A streaming preset's sources longer than this are made in parts (STREAM_SPLIT_MIN_SECONDS). */
  streamMinSeconds?: number;
  /** About this long each part (SPLIT_PART_SECONDS). */
  partSeconds: number;
  /** A single file's sources of this many bytes or more, from an origin serving ranges, are split where they are (SPLIT_RANGED_MIN_BYTES). */
  rangedMinBytes?: number;
}

/** A single file's parts are this long at least, and whole multiples of it where no source keyframe is near their end. */
const PROGRESSIVE_UNIT_SECONDS = 2;

export type SplittableRecipe = ProgressiveRecipe;

/**
 * The presets whose video is encoded in pieces cut from the source and joined
 * (docs/scaling.md#which-jobs-split): the single files. A streaming preset splits its own way,
 * each part writing its segments into the stream (docs/playback.md#how-a-stream-is-made).
 */
export function splittableRecipe(presetId: string): SplittableRecipe | null {
  const recipe = findDefinition(presetId)?.recipe;
  return recipe?.kind === "progressive" ? recipe : null;
}

/** Frames per unit of a single file's parts: 2 s. */
export function gopFramesOf(fps: { num: number; den: number }): number {
  return Math.max(1, Math.round((PROGRESSIVE_UNIT_SECONDS * fps.num) / fps.den));
}

/** A part's end moves to a source keyframe at most this share of a part away from where it would fall. */
const SNAP_SHARE = 1 / 4;

/** The first index of a sorted list whose value is at least `value`. */
function firstAtLeast(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Pure: where each part starts (frame numbers; the first is 0). A part is `partFrames` long,
 * or ends instead on the keyframe of `keyframes` nearest that end within SNAP_SHARE of a part,
 * so the next part's piece starts on its first frame and no frame before it is decoded for
 * nothing. The rest after the last start makes the last part, at least `minFrames` long.
 */
function partStarts(
  totalFrames: number,
  partFrames: number,
  minFrames: number,
  keyframes: readonly number[],
): number[] {
  const starts = [0];
  const reach = Math.floor(partFrames * SNAP_SHARE);
  for (;;) {
    const start = starts[starts.length - 1];
    const end = start + partFrames;
    if (totalFrames - end < minFrames) return starts;
    const lowest = Math.max(end - reach, start + minFrames);
    const highest = Math.min(end + reach, totalFrames - minFrames);
    let snapped: number | undefined;
    for (let i = firstAtLeast(keyframes, lowest); i < keyframes.length && keyframes[i] <= highest; i++) {
      if (snapped === undefined || Math.abs(keyframes[i] - end) < Math.abs(snapped - end)) snapped = keyframes[i];
    }
    starts.push(snapped ?? end);
  }
}

/**
 * Pure: a single file's parts, or null when it is encoded whole (too short, not a constant
 * frame rate, rotated, no video). A part ends on a source keyframe near where it would end, and
 * the last part takes what remains (at least one 2 s unit: a shorter tail joins the part before it).
 */
export function planSplit(probe: ProbeSummary, facts: SplitFacts, settings: SplitSettings): SplitPlan | null {
  const video = probe.video;
  if (!video || probe.duration <= settings.minSeconds) return null;
  if (!facts.constantRate || facts.rotated) return null;
  const totalFrames = facts.frameTimes.length;
  const gopFrames = gopFramesOf(facts.fps);
  const framesPerSecond = facts.fps.num / facts.fps.den;
  const gopsPerPart = Math.max(
    Math.round((settings.partSeconds * framesPerSecond) / gopFrames),
    Math.ceil(totalFrames / gopFrames / MAX_PARTS),
    1,
  );
  const partFrames = gopsPerPart * gopFrames;
  let starts = partStarts(totalFrames, partFrames, gopFrames, facts.keyframes);
  // Ends moved back may make more parts than the cap allows: then no end moves.
  if (starts.length > MAX_PARTS) starts = partStarts(totalFrames, partFrames, gopFrames, []);
  if (starts.length < 2) return null;
  const period = facts.fps.den / facts.fps.num;
  const timeOf = (frame: number) =>
    frame < totalFrames ? facts.frameTimes[frame] : facts.frameTimes[totalFrames - 1] + period;
  const parts: SplitPart[] = starts.map((firstFrame, index) => {
    const next = index + 1 < starts.length ? starts[index + 1] : totalFrames;
    return { index, firstFrame, frameCount: next - firstFrame, from: timeOf(firstFrame), to: timeOf(next) };
  });
  const audio = probe.audio.length > 0 && facts.audioStart !== null;
  return {
    fps: facts.fps,
    height: video.height,
    width: video.width,
    sampleAspect: video.sampleAspect,
    totalFrames,
    gopFrames,
    parts,
    audio,
    audioStart: audio && facts.audioStart !== null ? facts.audioStart - facts.frameTimes[0] : 0,
  };
}
