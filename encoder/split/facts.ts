import type { FrameRate } from "../../domain/split";
import { inputArgs } from "../ffmpeg/args/command";
import type { ProbedSource } from "../ffmpeg/probe";
import { runFfprobe, type RunOptions } from "../ffmpeg/run";

/** What the split planner needs beyond the probe: every frame's time, read off the packets (no decode). */
export interface SplitFacts {
  /** The stream's nominal rate, exactly (r_frame_rate). */
  fps: FrameRate;
  /** Presentation times of every video frame, in seconds, in order. */
  frameTimes: number[];
  /** The frames (indices into frameTimes) a decode can start from: the source's keyframes, in order. */
  keyframes: number[];
  /** Whether consecutive frames are always one frame period apart (within a quarter period). */
  constantRate: boolean;
  rotated: boolean;
  /** Where the first audio packet sits on the source's clock; null without audio. */
  audioStart: number | null;
}

function fraction(value: string | undefined): FrameRate | null {
  const [num, den] = (value ?? "").split("/").map(Number);
  return Number.isInteger(num) && Number.isInteger(den) && num > 0 && den > 0 ? { num, den } : null;
}

/** Pure: the frame times (seconds) and keyframes, from ffprobe's `pts,flags` columns in the stream's time base; null when a packet has no time. */
export function framesOf(
  packetColumns: string,
  timeBase: FrameRate,
): { frameTimes: number[]; keyframes: number[] } | null {
  const packets: { pts: number; key: boolean }[] = [];
  for (const line of packetColumns.split("\n")) {
    const [value, flags = ""] = line.split(",");
    if (!value?.trim()) continue;
    const pts = Number(value);
    if (!Number.isFinite(pts)) return null;
    packets.push({ pts, key: flags.includes("K") });
  }
  // Packets come in decode order; with B-frames, presentation order differs.
  packets.sort((a, b) => a.pts - b.pts);
  return {
    frameTimes: packets.map((p) => (p.pts * timeBase.num) / timeBase.den),
    keyframes: packets.flatMap((p, i) => (p.key ? [i] : [])),
  };
}

/** Pure: every step between frames one period long, give or take a quarter of one. */
export function isConstantRate(frameTimes: readonly number[], fps: FrameRate): boolean {
  const period = fps.den / fps.num;
  for (let i = 1; i < frameTimes.length; i++) {
    if (Math.abs(frameTimes[i] - frameTimes[i - 1] - period) > period / 4) return false;
  }
  return frameTimes.length > 0;
}

/**
 * Reads the facts: the streams' clocks from the source's probe, every frame's time and keyframe
 * from one ffprobe run over the container's packets (no frame is decoded).
 */
export async function readSplitFacts(
  path: string,
  probed: ProbedSource,
  options: RunOptions,
): Promise<SplitFacts | null> {
  const { probe, clocks } = probed;
  const video = probe.video && clocks.find((c) => c.index === probe.video?.index);
  const audioIndex = probe.audio[0]?.index;
  const audio = audioIndex === undefined ? undefined : clocks.find((c) => c.index === audioIndex);
  const fps = fraction(video?.frameRate);
  const timeBase = fraction(video?.timeBase);
  if (!video || !fps || !timeBase) return null;
  const packets = await runFfprobe(
    [
      "-v",
      "error",
      "-select_streams",
      String(video.index),
      "-show_entries",
      "packet=pts,flags",
      "-of",
      "csv=p=0",
      ...inputArgs({ path }),
    ],
    options,
  );
  const frames = framesOf(packets.stdout, timeBase);
  if (!frames) return null;
  const audioStart = audio ? Number(audio.startTime) : null;
  return {
    fps,
    ...frames,
    constantRate: isConstantRate(frames.frameTimes, fps),
    rotated: Math.abs(video.rotation) % 360 !== 0,
    audioStart: audioStart !== null && Number.isFinite(audioStart) ? audioStart : null,
  };
}
