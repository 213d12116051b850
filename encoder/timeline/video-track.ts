import type { Resolution, VideoClip } from "../../domain/edl/schema";
import { AUDIO_FORMAT, atempoChain, silence } from "./audio";
import type { GraphBuilder } from "./graph";
import { round } from "./colour";
import { ffSeconds } from "./time";

export class TimelineError extends Error {
  readonly retryable = false;
}

export interface MediaInfo {
  path: string;
  hasVideo: boolean;
  hasAudio: boolean;
}

/** A clip as it sits on the timeline: where it starts and how long it plays there. */
interface Placed {
  clip: VideoClip;
  start: number;
  duration: number;
}

/**
 * Clips in time order. Where a clip overlaps the next one (the validator warns), the later
 * clip wins from its start time and the earlier one is cut there.
 */
export function placeClips(clips: VideoClip[]): Placed[] {
  const sorted = [...clips].sort((a, b) => a.startTime - b.startTime);
  return sorted.map((clip, i) => {
    const full = (clip.out - clip.in) / clip.speed;
    const next = sorted[i + 1]?.startTime ?? Infinity;
    return { clip, start: clip.startTime, duration: round(Math.min(full, next - clip.startTime), 6) };
  });
}

function videoSegment(g: GraphBuilder, input: number, p: Placed, frame: Resolution, fps: number): string {
  const { speed } = p.clip;
  const fit = `scale=${frame.width}:${frame.height}:force_original_aspect_ratio=decrease:force_divisible_by=2,pad=${frame.width}:${frame.height}:(ow-iw)/2:(oh-ih)/2:color=black`;
  // Slowing down, scale first so fps duplicates small frames; speeding up, drop frames first.
  const shape = speed < 1 ? `${fit},fps=${fps}` : `fps=${fps},${fit}`;
  return g.chain(
    `[${input}:v:0]`,
    [
      `setpts=(PTS-STARTPTS)/${round(speed, 6)}`,
      shape,
      "setsar=1",
      "format=yuv420p",
      // A source shorter than its in/out span holds its last frame rather than shortening the timeline.
      `tpad=stop_mode=clone:stop_duration=${ffSeconds(p.duration)}`,
      `trim=duration=${ffSeconds(p.duration)}`,
      "setpts=PTS-STARTPTS",
    ],
    "v",
  );
}

function audioSegment(g: GraphBuilder, p: Placed, own: { input: number; info: MediaInfo }, replacement?: { input: number; info: MediaInfo }): string {
  const { clip, duration } = p;
  const gain = clip.volume !== 0 ? [`volume=${clip.volume}dB`] : [];
  // Every segment is padded and trimmed to its exact length: short or missing audio cannot drift.
  const fit = ["apad", `atrim=duration=${ffSeconds(duration)}`, "asetpts=PTS-STARTPTS"];
  if (clip.mute) return g.chain("", [silence(duration)], "a");
  if (replacement) {
    if (!replacement.info.hasAudio) throw new TimelineError(`replaceAudio of clip "${clip.id}" has no audio stream`);
    return g.chain(`[${replacement.input}:a:0]`, ["asetpts=PTS-STARTPTS", AUDIO_FORMAT, ...gain, ...fit], "a");
  }
  if (!own.info.hasAudio) return g.chain("", [silence(duration)], "a");
  const tempo = atempoChain(clip.speed).map((f) => `atempo=${f}`);
  return g.chain(`[${own.input}:a:0]`, ["asetpts=PTS-STARTPTS", AUDIO_FORMAT, ...tempo, ...gain, ...fit], "a");
}

function gapSegment(g: GraphBuilder, seconds: number, frame: Resolution, fps: number): [string, string] {
  return [
    g.chain("", [`color=c=black:s=${frame.width}x${frame.height}:r=${fps}:d=${ffSeconds(seconds)}`, "format=yuv420p", "setsar=1"], "v"),
    g.chain("", [silence(seconds)], "a"),
  ];
}

/**
 * The video track as one picture and one sound stream: each clip opened as its own input with
 * `-ss`/`-t` (decoding starts near its in-point), black and silence for gaps and for any time
 * after the last clip up to `end`, all joined by one concat.
 */
export function buildVideoTrack(
  g: GraphBuilder,
  clips: VideoClip[],
  media: (url: string, clipId: string) => MediaInfo,
  frame: Resolution,
  fps: number,
  end: number,
): { video: string; audio: string } {
  const segments: string[] = [];
  let cursor = 0;
  for (const p of placeClips(clips)) {
    if (p.duration <= 0) continue;
    if (p.start - cursor > 1e-6) segments.push(...gapSegment(g, p.start - cursor, frame, fps));
    const info = media(p.clip.src, p.clip.id);
    if (!info.hasVideo) throw new TimelineError(`Asset for clip "${p.clip.id}" has no video stream`);
    const input = g.input(["-ss", ffSeconds(p.clip.in), "-t", ffSeconds(p.duration * p.clip.speed), "-i", info.path]);
    const replacement = p.clip.replaceAudio && !p.clip.mute ? media(p.clip.replaceAudio, p.clip.id) : undefined;
    const replacementInput = replacement ? g.input(["-t", ffSeconds(p.duration), "-i", replacement.path]) : undefined;
    segments.push(
      videoSegment(g, input, p, frame, fps),
      audioSegment(g, p, { input, info }, replacement && { input: replacementInput!, info: replacement }),
    );
    cursor = p.start + p.duration;
  }
  if (end - cursor > 1e-6) segments.push(...gapSegment(g, end - cursor, frame, fps));
  const video = g.label("v");
  const audio = g.label("a");
  g.add(`${segments.join("")}concat=n=${segments.length / 2}:v=1:a=1${video}${audio}`);
  return { video, audio };
}
