import type { LadderRecipe } from "../../domain/presets/recipes";
import { type FrameRate, MAX_PARTS, type SplitPlan } from "../../domain/split";
import type { StreamLayout } from "../../domain/stream/layout";
import { planStream } from "../../domain/stream/plan";
import type { ProbedSource } from "../ffmpeg/probe";
import { sourceClock } from "./whole";

/** A clock's frame rate as an exact fraction, or the probe's rounded one over 1 when the container gives none. */
function frameRateOf({ probe, clocks }: ProbedSource): FrameRate {
  const rate = clocks.find((c) => c.index === probe.video?.index)?.frameRate ?? "";
  const [num, den] = rate.split("/").map(Number);
  if (Number.isInteger(num) && Number.isInteger(den) && num > 0 && den > 0) return { num, den };
  return { num: Math.round(probe.video?.fps ?? 30), den: 1 };
}

/**
 * Pure: a streaming preset's split plan (docs/playback.md#how-a-stream-is-made): the stream's
 * segments in parts, the first ones short, each part's frames counted from its times (they weigh
 * its progress; its encoder selects its frames by time), the audio a task of its own.
 */
export function streamSplitPlan(
  recipe: LadderRecipe,
  probed: ProbedSource,
  layout: StreamLayout,
  partSeconds: number,
): SplitPlan {
  const { probe } = probed;
  const video = probe.video;
  if (!video) throw new Error("a stream without video");
  const fps = frameRateOf(probed);
  const rate = fps.num / fps.den;
  const clock = sourceClock(probed);
  const { parts, boundaries } = planStream(probe.duration, {
    gopSeconds: recipe.gopSeconds,
    segmentSeconds: recipe.packaging.segmentSeconds,
    partSeconds,
    maxParts: MAX_PARTS,
  });
  const frameAt = (seconds: number) => Math.round(seconds * rate);
  const totalFrames = Math.max(parts.length, frameAt(boundaries[boundaries.length - 1]));
  const splitParts = parts.map((part, i) => {
    const firstFrame = Math.min(frameAt(part.from), totalFrames - (parts.length - i));
    const next =
      i + 1 < parts.length ? Math.min(frameAt(parts[i + 1].from), totalFrames - (parts.length - i - 1)) : totalFrames;
    return { index: i, firstFrame, frameCount: Math.max(1, next - firstFrame), from: part.from, to: part.to };
  });
  const audio = probe.audio[0];
  return {
    fps,
    height: video.height,
    width: video.width,
    sampleAspect: video.sampleAspect,
    totalFrames,
    gopFrames: Math.max(1, Math.round(recipe.gopSeconds * rate)),
    parts: splitParts,
    audio: audio !== undefined,
    audioStart: (clock.audioStart ?? clock.videoStart) - clock.videoStart,
    stream: {
      layout,
      segments: parts.map((p) => ({ first: p.firstSegment, count: p.segmentCount })),
      videoIndex: video.index,
      videoStart: clock.videoStart,
      audioIndex: audio?.index ?? null,
      audioStart: clock.audioStart,
    },
  };
}
