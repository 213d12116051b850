import type { Resolution, VideoClip } from "../../domain/edl/schema";
import { JobFailure } from "../failure";
import { AUDIO_FORMAT, SAMPLE_RATE, atempoChain, silence } from "./audio";
import type { GraphBuilder } from "./graph";
import { round } from "./colour";
import { ffSeconds } from "./time";

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
function placeClips(clips: VideoClip[]): Placed[] {
  const sorted = [...clips].sort((a, b) => a.startTime - b.startTime);
  return sorted.map((clip, i) => {
    const full = (clip.out - clip.in) / clip.speed;
    const next = sorted[i + 1]?.startTime ?? Infinity;
    return { clip, start: clip.startTime, duration: round(Math.min(full, next - clip.startTime), 6) };
  });
}

/** A stretch of the timeline as whole output frames, and the audio samples of the same span. */
interface Span {
  frames: number;
  samples: number;
}

/**
 * Boundaries snap to the output's frame grid, and the audio to the same instants, so every
 * segment is a whole number of frames and the joined track can never drift from the timeline:
 * four 2.5 s clips at 25 fps start at frames 0, 63, 125, 188 (not 0, 63, 126, 189).
 */
export function spanOf(from: number, to: number, fps: number): Span {
  const frameAt = (t: number) => Math.round(t * fps);
  const sampleAt = (frame: number) => Math.round((frame / fps) * SAMPLE_RATE);
  const [a, b] = [frameAt(from), frameAt(to)];
  return { frames: b - a, samples: sampleAt(b) - sampleAt(a) };
}

function videoSegment(g: GraphBuilder, input: number, p: Placed, span: Span, frame: Resolution, fps: number): string {
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
      `tpad=stop_mode=clone:stop=${span.frames}`,
      `trim=end_frame=${span.frames}`,
      "setpts=PTS-STARTPTS",
    ],
    "v",
  );
}

function audioSegment(
  g: GraphBuilder,
  p: Placed,
  { samples }: Span,
  own: { input: number; info: MediaInfo },
  replacement?: { input: number; info: MediaInfo },
): string {
  const { clip } = p;
  const gain = clip.volume !== 0 ? [`volume=${clip.volume}dB`] : [];
  // Every segment is padded and trimmed to its exact length: short or missing audio cannot drift.
  const fit = ["apad", `atrim=end_sample=${samples}`, "asetpts=PTS-STARTPTS"];
  if (clip.mute) return g.chain("", [silence(samples)], "a");
  if (replacement) {
    if (!replacement.info.hasAudio)
      throw JobFailure.unsuitableSource(`replaceAudio of clip "${clip.id}" has no audio stream`);
    return g.chain(`[${replacement.input}:a:0]`, ["asetpts=PTS-STARTPTS", AUDIO_FORMAT, ...gain, ...fit], "a");
  }
  if (!own.info.hasAudio) return g.chain("", [silence(samples)], "a");
  const tempo = atempoChain(clip.speed).map((f) => `atempo=${f}`);
  return g.chain(`[${own.input}:a:0]`, ["asetpts=PTS-STARTPTS", AUDIO_FORMAT, ...tempo, ...gain, ...fit], "a");
}

function gapSegment(g: GraphBuilder, span: Span, frame: Resolution, fps: number): [string, string] {
  return [
    g.chain(
      "",
      [
        `color=c=black:s=${frame.width}x${frame.height}:r=${fps}`,
        `trim=end_frame=${span.frames}`,
        "format=yuv420p",
        "setsar=1",
      ],
      "v",
    ),
    g.chain("", [silence(span.samples)], "a"),
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
  const gapUntil = (to: number) => {
    const span = spanOf(cursor, to, fps);
    if (span.frames > 0) segments.push(...gapSegment(g, span, frame, fps));
  };
  for (const p of placeClips(clips)) {
    const span = spanOf(p.start, p.start + p.duration, fps);
    // Shorter than half a frame: it has no frame of its own on the output.
    if (span.frames <= 0) continue;
    gapUntil(p.start);
    const info = media(p.clip.src, p.clip.id);
    if (!info.hasVideo) throw JobFailure.unsuitableSource(`Asset for clip "${p.clip.id}" has no video stream`);
    const input = g.input({
      options: ["-ss", ffSeconds(p.clip.in), "-t", ffSeconds(p.duration * p.clip.speed)],
      path: info.path,
    });
    const replacement = p.clip.replaceAudio && !p.clip.mute ? media(p.clip.replaceAudio, p.clip.id) : undefined;
    const replacementAudio = replacement && {
      input: g.input({ options: ["-t", ffSeconds(p.duration)], path: replacement.path }),
      info: replacement,
    };
    segments.push(
      videoSegment(g, input, p, span, frame, fps),
      audioSegment(g, p, span, { input, info }, replacementAudio),
    );
    cursor = p.start + p.duration;
  }
  gapUntil(end);
  // A timeline of under half a frame at the sources' rate (the API checks only 0.1 s, or a frame
  // at output.fps): concat of nothing is FFmpeg's error, and would be retried.
  if (segments.length === 0)
    throw JobFailure.invalidTimeline(
      `The timeline is ${ffSeconds(end)} s long, less than a frame at ${fps} fps: it has no frame to encode`,
    );
  const video = g.label("v");
  const audio = g.label("a");
  g.add(`${segments.join("")}concat=n=${segments.length / 2}:v=1:a=1${video}${audio}`);
  return { video, audio };
}
