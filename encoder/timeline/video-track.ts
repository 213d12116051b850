import { type Resolution, type TransitionEdge, type VideoClip, videoClipEnd } from "../../domain/edl/validated-edl";
import { JobFailure } from "../failure";
import { even } from "../ffmpeg/args/sizes";
import { AUDIO_FORMAT, SAMPLE_RATE, atempoChain, silence } from "./audio";
import { cropFilters, filterFilters, flipRotateFilters } from "./effects";
import type { GraphBuilder } from "./graph";
import { round } from "./colour";
import { frameAt, framesSpan, type Span, sampleAt, spanOf } from "./grid";
import { joinAll, type Piece, piece } from "./joins";
import { ffSeconds } from "./time";

export interface MediaInfo {
  path: string;
  hasVideo: boolean;
  hasAudio: boolean;
  /** The source's frame height, for filters whose radius follows the picture (blur). */
  height?: number;
}

/** An xfade between a clip and its neighbour (or black): every transition type but `fade`. */
const xfadeEdge = (edge: TransitionEdge | undefined) => (edge && edge.type !== "fade" ? edge : undefined);

/** The xfade joining two clips in time order, when they overlap for one (the validator checks they do). */
function joinOf(a: VideoClip, b: VideoClip): TransitionEdge | undefined {
  const edge = xfadeEdge(b.transition?.in) ?? xfadeEdge(a.transition?.out);
  return edge && b.startTime < videoClipEnd(a) ? edge : undefined;
}

/** A clip as it sits on the timeline: where it starts, how long it plays there, and its xfades. */
interface Placed {
  clip: VideoClip;
  start: number;
  duration: number;
  /** The xfade with the previous clip, which this one overlaps. */
  joinedPrev?: TransitionEdge;
  joinedNext?: TransitionEdge;
}

/**
 * Clips in time order. Where a clip overlaps the next one (the validator warns), the later
 * clip wins from its start time and the earlier one is cut there, unless the two overlap for
 * a transition (1.1), which plays both whole.
 */
function placeClips(clips: VideoClip[]): Placed[] {
  const sorted = [...clips].sort((a, b) => a.startTime - b.startTime);
  return sorted.map((clip, i) => {
    const full = videoClipEnd(clip) - clip.startTime;
    const after = sorted[i + 1];
    const joinedNext = after && joinOf(clip, after);
    const joinedPrev = i > 0 ? joinOf(sorted[i - 1], clip) : undefined;
    const next = joinedNext ? Infinity : (after?.startTime ?? Infinity);
    return {
      clip,
      start: clip.startTime,
      duration: round(Math.min(full, next - clip.startTime), 6),
      ...(joinedPrev ? { joinedPrev } : {}),
      ...(joinedNext ? { joinedNext } : {}),
    };
  });
}

/**
 * Fit inside the frame, centred on black. A transform's scale multiplies the fitted size: larger
 * is cut to the frame, smaller leaves more black. One filter string, as 1.0 always wrote it.
 */
function fitFilter(frame: Resolution, scale: number): string {
  const pad = `pad=${frame.width}:${frame.height}:(ow-iw)/2:(oh-ih)/2:color=black`;
  const [w, h] = scale === 1 ? [frame.width, frame.height] : [even(frame.width * scale), even(frame.height * scale)];
  const fit = `scale=${w}:${h}:force_original_aspect_ratio=decrease:force_divisible_by=2`;
  if (scale <= 1) return `${fit},${pad}`;
  return `${fit},crop='min(iw,${frame.width})':'min(ih,${frame.height})',${pad}`;
}

/** Where a freeze sits in the clip's frames: the frame held, and for how many more frames. */
function freezeFrames(clip: VideoClip, fps: number): { at: number; extra: number } | undefined {
  if (!clip.freeze) return undefined;
  return { at: frameAt((clip.freeze.at - clip.in) / clip.speed, fps), extra: frameAt(clip.freeze.duration, fps) };
}

/** Fades through black at the clip's edges (`fade` transitions), by frames. */
function fadeFrames(clip: VideoClip, fps: number, frames: number): string[] {
  const { in: fadeIn, out: fadeOut } = clip.transition ?? {};
  const n = (d: number) => Math.min(frames, Math.max(1, frameAt(d, fps)));
  return [
    ...(fadeIn?.type === "fade" ? [`fade=t=in:s=0:n=${n(fadeIn.duration)}`] : []),
    ...(fadeOut?.type === "fade" ? [`fade=t=out:s=${frames - n(fadeOut.duration)}:n=${n(fadeOut.duration)}`] : []),
  ];
}

function videoSegment(
  g: GraphBuilder,
  input: number,
  p: Placed,
  info: MediaInfo,
  span: Span,
  frame: Resolution,
  fps: number,
): string {
  const { speed, crop, transform, filters } = p.clip;
  const fit = fitFilter(frame, transform?.scale ?? 1);
  // Slowing down, scale first so fps duplicates small frames; speeding up, drop frames first.
  const shape = speed < 1 ? `${fit},fps=${fps}` : `fps=${fps},${fit}`;
  // The source's own picture is cropped, filtered and turned before it is fitted (so a negative
  // leaves the fitting's bars black); a blur's radius follows the cropped picture's height.
  const sourceHeight = (info.height ?? frame.height) * (crop ? 1 - crop.top - crop.bottom : 1);
  const freeze = freezeFrames(p.clip, fps);
  return g.chain(
    `[${input}:v:0]`,
    [
      `setpts=(PTS-STARTPTS)/${round(speed, 6)}`,
      ...cropFilters(crop),
      ...filterFilters(filters, sourceHeight),
      ...flipRotateFilters(transform, "black"),
      shape,
      "setsar=1",
      "format=yuv420p",
      // The held frame repeated, and the frames after it retimed to follow the hold. FFmpeg 5.1's
      // loop compares `start` with the frames taken so far, counting the one in hand: start=k+1
      // holds frame k (checked on frame hashes, test/render/timeline/freeze-render.test.ts).
      ...(freeze ? [`loop=loop=${freeze.extra}:size=1:start=${freeze.at + 1}`, "setpts=N/FRAME_RATE/TB"] : []),
      // A source shorter than its in/out span holds its last frame rather than shortening the timeline.
      `tpad=stop_mode=clone:stop=${span.frames}`,
      `trim=end_frame=${span.frames}`,
      "setpts=PTS-STARTPTS",
      ...fadeFrames(p.clip, fps, span.frames),
    ],
    "v",
  );
}

/** Audio fades through silence at the clip's edges (`fade` transitions), by samples. */
function audioFades(clip: VideoClip, samples: number): string[] {
  const { in: fadeIn, out: fadeOut } = clip.transition ?? {};
  const n = (d: number) => Math.min(samples, Math.max(1, Math.round(d * SAMPLE_RATE)));
  return [
    ...(fadeIn?.type === "fade" ? [`afade=t=in:ss=0:ns=${n(fadeIn.duration)}`] : []),
    ...(fadeOut?.type === "fade" ? [`afade=t=out:ss=${samples - n(fadeOut.duration)}:ns=${n(fadeOut.duration)}`] : []),
  ];
}

/**
 * The clip's sound with the freeze's silence put in at the held frame: the sound before it, as
 * many samples of silence as the hold has frames, then the rest.
 */
function withHold(g: GraphBuilder, from: string, filters: string[], hold: { at: number; extra: number }, fps: number) {
  const head = sampleAt(hold.at, fps);
  const gap = sampleAt(hold.at + hold.extra, fps) - head;
  const [before, after] = [g.label("a"), g.label("a")];
  g.add(`${from}${filters.join(",")},asplit=2${before}${after}`);
  const headPart = g.chain(before, [`atrim=end_sample=${head}`, "asetpts=PTS-STARTPTS"], "a");
  const tailPart = g.chain(after, [`atrim=start_sample=${head}`, "asetpts=PTS-STARTPTS"], "a");
  const quiet = g.chain("", [silence(gap)], "a");
  return g.chain(`${headPart}${quiet}${tailPart}`, ["concat=n=3:v=0:a=1"], "a");
}

function audioSegment(
  g: GraphBuilder,
  p: Placed,
  { samples }: Span,
  fps: number,
  own: { input: number; info: MediaInfo },
  replacement?: { input: number; info: MediaInfo },
): string {
  const { clip } = p;
  const gain = clip.volume !== 0 ? [`volume=${clip.volume}dB`] : [];
  // Every segment is padded and trimmed to its exact length: short or missing audio cannot drift.
  const fit = ["apad", `atrim=end_sample=${samples}`, "asetpts=PTS-STARTPTS", ...audioFades(clip, samples)];
  if (clip.mute) return g.chain("", [silence(samples)], "a");
  let from: string;
  let filters: string[];
  if (replacement) {
    if (!replacement.info.hasAudio)
      throw JobFailure.unsuitableSource(`replaceAudio of clip "${clip.id}" has no audio stream`);
    [from, filters] = [`[${replacement.input}:a:0]`, ["asetpts=PTS-STARTPTS", AUDIO_FORMAT, ...gain]];
  } else {
    if (!own.info.hasAudio) return g.chain("", [silence(samples)], "a");
    const tempo = atempoChain(clip.speed).map((f) => `atempo=${f}`);
    [from, filters] = [`[${own.input}:a:0]`, ["asetpts=PTS-STARTPTS", AUDIO_FORMAT, ...tempo, ...gain]];
  }
  const hold = freezeFrames(clip, fps);
  if (hold) return g.chain(withHold(g, from, filters, hold, fps), fit, "a");
  return g.chain(from, [...filters, ...fit], "a");
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
 * after the last clip up to `end`, all joined by one concat; with 1.1's transitions, runs of
 * clips joined by cuts are concatenated and cross-faded into each other (or into black).
 */
export function buildVideoTrack(
  g: GraphBuilder,
  clips: VideoClip[],
  media: (url: string, clipId: string) => MediaInfo,
  frame: Resolution,
  fps: number,
  end: number,
): { video: string; audio: string } {
  const pieces: Piece[] = [];
  let cursor = 0;
  const gapUntil = (to: number) => {
    const span = spanOf(cursor, to, fps);
    if (span.frames > 0) pieces.push(piece(gapSegment(g, span, frame, fps), span.frames));
  };
  /** Black and silence `overlap` frames long from frame `at`, for a clip's transition with black. */
  const black = (at: number, overlap: number, join?: Piece["join"]) => {
    const span = framesSpan(at, at + overlap, fps);
    pieces.push(piece(gapSegment(g, span, frame, fps), span.frames, join));
  };
  for (const p of placeClips(clips)) {
    const span = spanOf(p.start, p.start + p.duration, fps);
    // Shorter than half a frame: it has no frame of its own on the output.
    if (span.frames <= 0) continue;
    const startFrame = frameAt(p.start, fps);
    const overlap = p.joinedPrev ? frameAt(cursor, fps) - startFrame : 0;
    if (!p.joinedPrev) gapUntil(p.start);
    const info = media(p.clip.src, p.clip.id);
    if (!info.hasVideo) throw JobFailure.unsuitableSource(`Asset for clip "${p.clip.id}" has no video stream`);
    const sourceSeconds = p.duration * p.clip.speed;
    const input = g.input({
      options: [
        "-ss",
        ffSeconds(p.clip.in),
        "-t",
        // A freeze holds a frame: the source itself is read for its in/out span only.
        ffSeconds(p.clip.freeze ? Math.min(p.clip.out - p.clip.in, sourceSeconds) : sourceSeconds),
      ],
      path: info.path,
    });
    const replacement = p.clip.replaceAudio && !p.clip.mute ? media(p.clip.replaceAudio, p.clip.id) : undefined;
    const replacementAudio = replacement && {
      input: g.input({ options: ["-t", ffSeconds(p.duration)], path: replacement.path }),
      info: replacement,
    };
    // A transition with no neighbour on that side is with black (of under half a frame: none).
    const edgeFrames = (edge: TransitionEdge) => Math.min(span.frames, frameAt(edge.duration, fps));
    const blackIn = !p.joinedPrev ? xfadeEdge(p.clip.transition?.in) : undefined;
    const inFrames = blackIn ? edgeFrames(blackIn) : 0;
    if (blackIn && inFrames > 0) black(startFrame, inFrames);
    const join = p.joinedPrev && overlap > 0 ? { type: p.joinedPrev.type, frames: overlap } : undefined;
    const joinBlack = blackIn && inFrames > 0 ? { type: blackIn.type, frames: inFrames } : undefined;
    pieces.push(
      piece(
        [
          videoSegment(g, input, p, info, span, frame, fps),
          audioSegment(g, p, span, fps, { input, info }, replacementAudio),
        ],
        span.frames,
        join ?? joinBlack,
      ),
    );
    cursor = p.start + p.duration;
    const blackOut = !p.joinedNext ? xfadeEdge(p.clip.transition?.out) : undefined;
    const outFrames = blackOut ? edgeFrames(blackOut) : 0;
    if (blackOut && outFrames > 0)
      black(startFrame + span.frames - outFrames, outFrames, { type: blackOut.type, frames: outFrames });
  }
  gapUntil(end);
  // A timeline of under half a frame at the sources' rate (the API checks only 0.1 s, or a frame
  // at output.fps): concat of nothing is FFmpeg's error, and would be retried.
  if (pieces.length === 0)
    throw JobFailure.invalidTimeline(
      `The timeline is ${ffSeconds(end)} s long, less than a frame at ${fps} fps: it has no frame to encode`,
    );
  if (pieces.some((p) => p.join)) return joinAll(g, pieces, fps);
  // 1.0's graph, unchanged: one concat of every segment, even a single one.
  const video = g.label("v");
  const audio = g.label("a");
  g.add(`${pieces.map((p) => `${p.video}${p.audio}`).join("")}concat=n=${pieces.length}:v=1:a=1${video}${audio}`);
  return { video, audio };
}
