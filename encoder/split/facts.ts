import type { FrameRate } from "../../domain/split";
import { type FfmpegInput, inputArgs } from "../ffmpeg/args/command";
import type { ProbedSource } from "../ffmpeg/probe";
import { runFfprobe, type RunOptions } from "../ffmpeg/run";
import { fileBytes, mp4VideoPackets, type SourceBytes } from "./mp4-index";

/** What the split planner needs beyond the probe: every frame's time, read off the packets (no decode). */
export interface SplitFacts {
  /** The stream's nominal rate, exactly (r_frame_rate). */
  fps: FrameRate;
  /** Presentation times of every video frame shown, in seconds, in order. */
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

/**
 * ffprobe's `pts,flags` lines read as they come, each packet kept as one number (pts·2, plus 1 for
 * a keyframe), so a long source's millions of packets take 8 bytes each rather than a line and an
 * object apiece. `frames` gives the frame times (seconds) and keyframes, in presentation order;
 * null when a packet has no time.
 */
function packetReader() {
  let packed = new Float64Array(1 << 12);
  let count = 0;
  let partial = "";
  let timeless = false;
  const addPacket = (pts: number, key: boolean) => {
    if (!Number.isSafeInteger(pts * 2 + 1)) {
      timeless = true;
      return;
    }
    if (count === packed.length) {
      const grown = new Float64Array(packed.length * 2);
      grown.set(packed);
      packed = grown;
    }
    packed[count++] = pts * 2 + (key ? 1 : 0);
  };
  const add = (line: string) => {
    const [value, flags = ""] = line.split(",");
    // A packet an edit list discards (flag D: the frames before a stream-copy cut's start, say) is
    // decoded but never shown, by a player or by the whole encode: it is no frame of the source.
    if (!value?.trim() || flags.includes("D")) return;
    addPacket(Number(value), flags.includes("K"));
  };
  return {
    addPacket,
    push(chunk: string) {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) add(line);
    },
    frames(timeBase: FrameRate): { frameTimes: number[]; keyframes: number[] } | null {
      add(partial);
      partial = "";
      if (timeless) return null;
      // Packets come in decode order; with B-frames, presentation order differs. The keyframe bit
      // never reorders: distinct times are at least 2 apart once doubled.
      const sorted = packed.slice(0, count).sort();
      const frameTimes = new Array<number>(count);
      const keyframes: number[] = [];
      for (let i = 0; i < count; i++) {
        const key = ((sorted[i] % 2) + 2) % 2;
        frameTimes[i] = (((sorted[i] - key) / 2) * timeBase.num) / timeBase.den;
        if (key === 1) keyframes.push(i);
      }
      return { frameTimes, keyframes };
    },
  };
}

/** Pure: the frame times and keyframes of a whole `pts,flags` report (packetReader on one chunk). */
export function framesOf(
  packetColumns: string,
  timeBase: FrameRate,
): { frameTimes: number[]; keyframes: number[] } | null {
  const reader = packetReader();
  reader.push(packetColumns);
  return reader.frames(timeBase);
}

/** Pure: every step between frames one period long, give or take a quarter of one. */
export function isConstantRate(frameTimes: readonly number[], fps: FrameRate): boolean {
  const period = fps.den / fps.num;
  for (let i = 1; i < frameTimes.length; i++) {
    if (Math.abs(frameTimes[i] - frameTimes[i - 1] - period) > period / 4) return false;
  }
  return frameTimes.length > 0;
}

/** How the index reader gets at the source's bytes, and where it says why it could not read them. */
export interface IndexAccess {
  bytes?: SourceBytes;
  warn?: (message: string) => void;
}

/**
 * Reads the facts: the streams' clocks from the source's probe, every frame's time and keyframe
 * from an MP4's index when it has one this reader follows (encoder/split/mp4-index.ts), else
 * from one ffprobe run over the container's packets (no frame is decoded either way). `input` is
 * the source as FFmpeg reads it; `index.bytes` its bytes for the index reader (a local file's
 * are read from it), `index.warn` told why an index went to the scan.
 */
export async function readSplitFacts(
  source: string | FfmpegInput,
  probed: ProbedSource,
  options: RunOptions,
  index: IndexAccess = {},
): Promise<SplitFacts | null> {
  const input = typeof source === "string" ? { path: source } : source;
  const { probe, clocks } = probed;
  const video = probe.video && clocks.find((c) => c.index === probe.video?.index);
  const audioIndex = probe.audio[0]?.index;
  const audio = audioIndex === undefined ? undefined : clocks.find((c) => c.index === audioIndex);
  const fps = fraction(video?.frameRate);
  const timeBase = fraction(video?.timeBase);
  if (!video || !fps || !timeBase) return null;
  const packets = packetReader();
  const indexed = await readIndex(input, index, video.index, timeBase, options.signal);
  if (indexed) for (const packet of indexed.packets) packets.addPacket(packet.pts, packet.key);
  else
    await runFfprobe(
      [
        "-v",
        "error",
        "-select_streams",
        String(video.index),
        "-show_entries",
        "packet=pts,flags",
        "-of",
        "csv=p=0",
        ...inputArgs(input),
      ],
      { ...options, onReport: packets.push },
    );
  const frames = packets.frames(timeBase);
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

/**
 * The video's packets from the source's MP4 index, or null for the packet scan. An index this
 * reader cannot parse goes to the scan too (ffprobe says what is wrong with it), logged with its cause.
 */
async function readIndex(
  input: FfmpegInput,
  { bytes, warn }: IndexAccess,
  streamIndex: number,
  timeBase: FrameRate,
  signal?: AbortSignal,
) {
  const local = bytes || input.ranged ? null : await fileBytes(input.path);
  const source = bytes ?? local;
  if (!source) return null;
  try {
    return await mp4VideoPackets(source, streamIndex, timeBase);
  } catch (err) {
    signal?.throwIfAborted();
    warn?.(`the MP4 index could not be read, so the packets are scanned: ${(err as Error).message}`);
    return null;
  } finally {
    await local?.close();
  }
}
