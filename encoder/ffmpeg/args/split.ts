import type { SplitPart, SplitPlan } from "../../../domain/split";
import type { SplittableRecipe } from "../../split/plan";
import { type FfmpegInput, head, kbit, videoAudioFormat, type FfmpegCommand } from "./command";
import { faststart, isIsoBmff } from "./containers";
import { frameFilter, progressiveRate } from "./progressive";
import { videoEncoderArgs } from "./video-encoder";

/**
 * A piece runs on past its part's last frame by this much: with B-frames, a frame shown before
 * the end can be stored after a later one, which its decoding needs.
 */
const PIECE_TAIL_SECONDS = 0.5;

/**
 * Added to a piece's every timestamp. Matroska holds none below zero, and its muxer shifts a piece
 * that starts below zero to zero, off the source's clock: a part's piece starts at the keyframe
 * before its first frame, and where an edit list hides frames (a stream-copy cut off a keyframe),
 * that keyframe is shown before zero. An hour is more than any keyframe interval.
 */
const PIECE_CLOCK_OFFSET_SECONDS = 3600;

const seconds = (value: number) => value.toFixed(6);
const framePeriod = (plan: SplitPlan) => plan.fps.den / plan.fps.num;

/** A part's piece to cut: where it goes. */
export interface PieceCut {
  part: SplitPart;
  out: string;
}

/**
 * Parts' stretches of the source's video, copied (nothing decoded), in one FFmpeg run: each
 * from the keyframe at or before its part's first frame to a little past its last, on the
 * source's own clock (-copyts) and the offset above, so the part's encoder finds its frames by
 * their times. Each piece is an input of its own (the same file, sought to its stretch) and an
 * output of its own: a run's start costs about half what copying a 30 s 1080p piece does, so
 * several go to a run.
 */
export function piecesCommand(source: string, videoIndex: number, pieces: readonly PieceCut[]): FfmpegCommand {
  return {
    args: [
      ...head(
        pieces.map(({ part }) => ({
          path: source,
          options: ["-ss", seconds(part.from), "-to", seconds(part.to + PIECE_TAIL_SECONDS)],
        })),
      ),
      "-copyts",
      ...pieces.flatMap(({ out }, i) => [
        "-map",
        `${i}:${videoIndex}`,
        "-c",
        "copy",
        "-output_ts_offset",
        String(PIECE_CLOCK_OFFSET_SECONDS),
        "-f",
        "matroska",
        out,
      ]),
    ],
  };
}

/**
 * Codecs whose encoder delay (the priming samples a decoder drops) MP4 records in its edit list,
 * as the source's MP4 did; Matroska would keep the samples, and the encoded audio would start late.
 */
const ISO_AUDIO = new Set(["aac", "mp3", "alac", "ac3", "eac3"]);

/** The source's audio, copied whole for the audio's task, which encodes it once (docs/scaling.md#the-audio). */
export function audioPieceCommand(source: string, audio: { index: number; codec: string }, out: string): FfmpegCommand {
  const format = ISO_AUDIO.has(audio.codec) ? "mp4" : "matroska";
  return { args: [...head(source), "-map", `0:${audio.index}`, "-c", "copy", "-f", format, out] };
}

/**
 * Where a part's frames are read: its piece (a local path, or STDIN_INPUT for one read as it
 * arrives), which holds the part's video alone on the piece's clock; or the source itself as
 * FFmpeg reads it by ranges, its video stream `videoIndex`, on the source's own clock.
 */
export type PartInput = { piece: string } | { source: FfmpegInput; videoIndex: number };

/** How far before a part the source is sought: the seek counts from the file's start, the trim from the part's first frame. */
const SEEK_LEAD_SECONDS = 1;

/**
 * The part's input, where its video is mapped from, and where its first frame sits on the
 * clock FFmpeg reads it on (-copyts). A source read by ranges is sought to a keyframe a little
 * before the part (from its first frame's time less the video's start, as -ss counts from the
 * file's start, which is never after the video's): only that span of it is read.
 */
function partSource(plan: SplitPlan, part: SplitPart, input: PartInput) {
  if ("piece" in input)
    return { input: { path: input.piece }, video: PIECE_VIDEO, start: part.from + PIECE_CLOCK_OFFSET_SECONDS };
  const seek = Math.max(0, part.from - plan.parts[0].from - SEEK_LEAD_SECONDS);
  const options = [...(input.source.options ?? []), ...(seek > 0 ? ["-ss", seconds(seek)] : [])];
  return { input: { ...input.source, options }, video: `0:${input.videoIndex}`, start: part.from };
}

/**
 * Exactly the part's frames: those from half a period before its first frame's time (a piece's
 * clock rounds to the millisecond) on, the count cut by -frames. They are numbered afresh on a
 * time base of one frame period, so the parts join end to end without a gap.
 */
function partFrames(plan: SplitPlan, start: number): string {
  return `trim=start=${seconds(start - framePeriod(plan) / 2)},settb=expr=${plan.fps.den}/${plan.fps.num},setpts=N`;
}

/** A piece holds one stream, its part's video (piecesCommand). */
const PIECE_VIDEO = "0:0";

/**
 * One part's video, encoded with the preset's own video settings, in closed GOPs that start
 * on an IDR, to NUT: it keeps the exact time base and holds any codec. No audio: the audio's
 * task encodes it once for the whole source. Its picture is the source's, as the plan gives it:
 * a piece read as it arrives is encoded before anything could probe it.
 */
export function partCommand(
  recipe: SplittableRecipe,
  plan: SplitPlan,
  part: SplitPart,
  input: PartInput,
  out: string,
): FfmpegCommand {
  const source = partSource(plan, part, input);
  return {
    args: [
      ...head([source.input]),
      "-map",
      source.video,
      "-vf",
      `${partFrames(plan, source.start)},${frameFilter(recipe.fit, recipe.size, plan)}`,
      "-copyts",
      "-frames:v",
      String(part.frameCount),
      "-fps_mode",
      "passthrough",
      "-an",
      ...videoEncoderArgs({ encoder: recipe.video, rate: progressiveRate(recipe), isoBmff: false, closedGop: true }),
      "-f",
      "nut",
      out,
    ],
  };
}

/**
 * The concat demuxer's list of the parts, each with its exact length, so every part starts
 * where the one before ends whatever its own first timestamp (an encoder's B-frame delay).
 */
export function concatList(plan: SplitPlan, partFiles: readonly string[]): string {
  const lines = plan.parts.map((part, i) => {
    const name = partFiles[i].replaceAll("'", "'\\''");
    return `file '${name}'\nduration ${seconds((part.frameCount * plan.fps.den) / plan.fps.num)}`;
  });
  return `ffconcat version 1.0\n${lines.join("\n")}\n`;
}

/** ISO BMFF wants the codec's own sample entry; NUT's tag is not one. */
const ISO_TAGS: Readonly<Record<string, string>> = { libx264: "avc1", libx265: "hvc1", libsvtav1: "av01" };

function isoTag(recipe: SplittableRecipe, isoBmff: boolean): string[] {
  const tag = ISO_TAGS[recipe.video.codec];
  return isoBmff && tag ? ["-tag:v", tag] : [];
}

/**
 * The audio placed against the video as the unsplit encode places it (SplitPlan.audioStart), on
 * timestamps counted from its samples: the copied audio's own are rounded to the millisecond,
 * and a segment muxer (MPEG-TS) writes such jitter out as gaps a player hears. A real gap in the
 * source's audio (packets missing for 10 ms or more) is filled with silence, not closed up: the
 * whole encode keeps it, and closing it would play everything after it early.
 */
function audioPlacement(plan: SplitPlan): string[] {
  const filters = [
    ...(plan.audioStart < 0 ? [`atrim=start=${seconds(-plan.audioStart)}`] : []),
    "asetpts=PTS-STARTPTS",
    "aresample=async=1:min_hard_comp=0.01:first_pts=0",
    ...(plan.audioStart > 0 ? [`adelay=delays=${Math.round(plan.audioStart * 1000)}:all=1`] : []),
  ];
  return ["-af", filters.join(",")];
}

/**
 * The audio's task (docs/scaling.md#the-audio): the source's whole audio encoded once, beside the
 * parts, for the join to copy, read from its piece or from the source by ranges. MP4 keeps AAC's
 * encoder delay in its edit list and Matroska Opus's pre-skip, so the copy starts where the
 * whole encode's audio starts.
 */
export function audioTaskCommand(
  recipe: SplittableRecipe,
  plan: SplitPlan,
  input: FfmpegInput,
  out: string,
): FfmpegCommand {
  return {
    args: [
      ...head([input]),
      "-map",
      "0:a:0",
      ...audioPlacement(plan),
      ...videoAudioFormat(recipe.audioCodec),
      "-b:a",
      kbit(recipe.audioBitrate),
      "-f",
      recipe.audioCodec === "libopus" ? "matroska" : "mp4",
      out,
    ],
  };
}

/**
 * The join: the parts' video and the encoded audio, all copied (nothing is encoded here),
 * packaged as the preset packages it: a faststart MP4, or a WebM.
 */
export function joinCommand(
  recipe: SplittableRecipe,
  inputs: { list: string; audio: string | null },
  out: { dir: string; file: string },
): FfmpegCommand {
  const sources = [
    { path: inputs.list, options: ["-f", "concat", "-safe", "0"] },
    ...(inputs.audio ? [{ path: inputs.audio }] : []),
  ];
  return {
    args: [
      ...head(sources),
      "-map",
      "0:v:0",
      ...(inputs.audio ? ["-map", "1:a:0"] : []),
      "-c",
      "copy",
      ...isoTag(recipe, isIsoBmff(recipe.container)),
      ...faststart(recipe.container),
      `${out.dir}/${out.file}`,
    ],
  };
}
