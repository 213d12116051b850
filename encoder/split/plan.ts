import { findDefinition } from "../../domain/presets/definitions";
import type { LadderRecipe, ProgressiveRecipe } from "../../domain/presets/recipes";
import { MAX_PARTS, type SplitPart, type SplitPlan } from "../../domain/split";
import type { ProbeSummary } from "../ffmpeg/probe";
import type { SplitFacts } from "./facts";

export interface SplitSettings {
  /** Sources longer than this split (SPLIT_MIN_SECONDS). */
  minSeconds: number;
  /** About this long each part (SPLIT_PART_SECONDS). */
  partSeconds: number;
}

/** A progressive preset's parts are whole multiples of this, so its joins fall on a regular grid. */
const PROGRESSIVE_GRID_SECONDS = 2;

export type SplittableRecipe = ProgressiveRecipe | LadderRecipe;

/**
 * The presets whose video can be encoded in parts (docs/scaling.md#which-jobs-split): single
 * files and on-demand ladders. A live ladder (an event playlist, low-latency DASH) is for a
 * player that follows it as it grows, which parts joined at the end would not serve.
 */
export function splittableRecipe(presetId: string): SplittableRecipe | null {
  const recipe = findDefinition(presetId)?.recipe;
  if (recipe?.kind === "progressive") return recipe;
  if (recipe?.kind !== "ladder") return null;
  const { packaging } = recipe;
  if (packaging.format === "hls" && packaging.playlist === "event") return null;
  if (packaging.format === "dash" && packaging.lowLatency) return null;
  return recipe;
}

/** Frames per keyframe interval: the ladder's own, or the progressive grid. */
export function gopFramesOf(recipe: SplittableRecipe, fps: { num: number; den: number }): number {
  const seconds = recipe.kind === "ladder" ? recipe.gopSeconds : PROGRESSIVE_GRID_SECONDS;
  return Math.max(1, Math.round((seconds * fps.num) / fps.den));
}

/**
 * Pure: the parts of a source, or null when it is encoded whole (too short, not a constant
 * frame rate, rotated, no video). Every part but the last is a whole number of keyframe
 * intervals, and the last takes what remains (at least one interval: a shorter tail joins the
 * part before it).
 */
export function planSplit(
  recipe: SplittableRecipe,
  probe: ProbeSummary,
  facts: SplitFacts,
  settings: SplitSettings,
): SplitPlan | null {
  const video = probe.video;
  if (!video || probe.duration <= settings.minSeconds) return null;
  if (!facts.constantRate || facts.rotated) return null;
  const totalFrames = facts.frameTimes.length;
  const gopFrames = gopFramesOf(recipe, facts.fps);
  const framesPerSecond = facts.fps.num / facts.fps.den;
  const gopsPerPart = Math.max(
    Math.round((settings.partSeconds * framesPerSecond) / gopFrames),
    Math.ceil(totalFrames / gopFrames / MAX_PARTS),
    1,
  );
  const partFrames = gopsPerPart * gopFrames;
  let count = Math.floor(totalFrames / partFrames);
  if (totalFrames - count * partFrames >= gopFrames) count += 1;
  if (count < 2) return null;
  const period = facts.fps.den / facts.fps.num;
  const timeOf = (frame: number) =>
    frame < totalFrames ? facts.frameTimes[frame] : facts.frameTimes[totalFrames - 1] + period;
  const parts: SplitPart[] = Array.from({ length: count }, (_, index) => {
    const firstFrame = index * partFrames;
    const frameCount = index === count - 1 ? totalFrames - firstFrame : partFrames;
    return { index, firstFrame, frameCount, from: timeOf(firstFrame), to: timeOf(firstFrame + frameCount) };
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
