import { join } from "node:path";
import type { LadderRecipe } from "../../../domain/presets/recipes";
import {
  AUDIO_RENDITION,
  INIT_SEGMENT,
  MEDIA_OFFSET_SECONDS,
  MEDIA_PLAYLIST,
  renditionName,
  segmentExtension,
  segmentTypeOf,
  streamRungs,
} from "../../../domain/stream/layout";
import {
  fpsOf,
  type FfmpegCommand,
  type FfmpegInput,
  head,
  kbit,
  requireVideo,
  videoAudioArgs,
  type BuildContext,
} from "./command";
import { ladderFilter, rungRateArgs } from "./ladder";
import { videoEncoderArgs } from "./video-encoder";

/** What one FFmpeg run of a stream writes: its renditions, in the order they are mapped, and where its segment numbers start. */
interface StreamRun {
  /** The renditions' folder names, each an output stream in the order it is mapped. */
  renditions: readonly string[];
  /** The number of this run's first segment in its renditions (a part's first segment). */
  startNumber: number;
  /**
   * Where the source's first video frame sits on the run's clock, which is the source's own
   * (-copyts): its start time there.
   */
  clockStart: number;
}

/**
 * The stream's segments by FFmpeg's HLS muxer, one folder per rendition (domain/stream/layout.ts),
 * its own playlists only a record of which segments it has closed: the encoder reads them to store
 * each segment as it is closed, and the Worker writes the playlists players see. The muxer cuts
 * segment k at the first keyframe at or after k segment lengths from the run's start, which the
 * keyframe interval (a whole fraction of it) puts there. Segments are renamed into place only
 * once whole (`temp_file`); fMP4 without edit lists, so every run of a stream writes the same
 * init segment.
 */
function streamOutput(outDir: string, recipe: LadderRecipe, run: StreamRun): string[] {
  const type = segmentTypeOf(recipe);
  const { segmentSeconds } = recipe.packaging;
  return [
    // The first video frame moved to MEDIA_OFFSET_SECONDS: past any encoder's reordering delay, so
    // the muxer never shifts a run's timestamps to keep them positive (which would differ between parts).
    "-output_ts_offset",
    (MEDIA_OFFSET_SECONDS - run.clockStart).toFixed(6),
    "-f",
    "hls",
    "-hls_time",
    String(segmentSeconds),
    "-hls_playlist_type",
    "event",
    "-hls_list_size",
    "0",
    "-hls_segment_type",
    type,
    ...(type === "fmp4" ? ["-hls_fmp4_init_filename", INIT_SEGMENT, "-hls_segment_options", "use_editlist=0"] : []),
    "-hls_flags",
    "independent_segments+temp_file",
    "-start_number",
    String(run.startNumber),
    "-hls_segment_filename",
    join(outDir, "%v", `seg_%05d.${segmentExtension(type)}`),
    "-var_stream_map",
    varStreamMap(run.renditions),
    join(outDir, "%v", MEDIA_PLAYLIST),
  ];
}

/** var_stream_map counts each kind of stream on its own: the rungs are v:0, v:1 …, the audio a:0. */
function varStreamMap(renditions: readonly string[]): string {
  const video = renditions.filter((name) => name !== AUDIO_RENDITION);
  return renditions
    .map((name) => (name === AUDIO_RENDITION ? `a:0,name:${name}` : `v:${video.indexOf(name)},name:${name}`))
    .join(" ");
}

/** The video encoder of every rung: the ladder's, keyframes every keyframe interval from the run's first frame. */
function rungEncoding(recipe: LadderRecipe, fps: number): string[] {
  const gopFrames = Math.round(recipe.gopSeconds * fps);
  return videoEncoderArgs({ encoder: recipe.video, gopFrames, isoBmff: segmentTypeOf(recipe) === "fmp4" });
}

/** The audio rendition's encoding: AAC at the top kept rung's bitrate, shared by every rung. */
const audioEncoding = (recipe: LadderRecipe, sourceHeight: number) =>
  videoAudioArgs(recipe.audioCodec, kbit(streamRungs(recipe, sourceHeight)[0].audioBitrate));

/**
 * A whole stream in one FFmpeg run from a local source: every rung (decoded once, scaled in
 * cascade) and the audio, each a rendition of its own, on the source's clock as a part's are.
 * `videoStart` is the source's first video frame on its own clock; `input` the source as FFmpeg
 * reads it (a ranged source's proxy, or the file).
 */
export function wholeStreamCommand(
  ctx: BuildContext,
  recipe: LadderRecipe,
  videoStart: number,
  input: FfmpegInput = { path: ctx.input },
): FfmpegCommand {
  const video = requireVideo(ctx);
  const audio = ctx.probe.audio[0];
  const rungs = streamRungs(recipe, video.height);
  const renditions = [...rungs.map(renditionName), ...(audio ? [AUDIO_RENDITION] : [])];
  return {
    args: [
      ...head([input]),
      "-copyts",
      "-filter_complex",
      ladderFilter(`[0:${video.index}]`, rungs),
      ...rungs.flatMap((_, i) => ["-map", `[v${i}]`]),
      ...(audio ? ["-map", `0:${audio.index}`] : []),
      ...rungEncoding(recipe, fpsOf(video)),
      ...rungRateArgs(rungs),
      ...(audio ? audioEncoding(recipe, video.height) : []),
      ...streamOutput(ctx.outDir, recipe, { renditions, startNumber: 0, clockStart: videoStart }),
    ],
  };
}

/** How far before a part its input is sought: the seek counts from the file's start, the trim from the video's first frame. */
const SEEK_LEAD_SECONDS = 1;

/** What a part of a stream needs beyond the preset: the source's facts and its stretch of the timeline. */
export interface StreamPartInput {
  source: FfmpegInput;
  /** The source's video: which stream, how tall, how fast, and where its first frame sits on the source's clock. */
  video: { index: number; height: number; fps: number; start: number };
  /** Seconds from the first video frame: the part's first segment's start, and its last's end (absent: to the source's end). */
  from: number;
  to?: number;
  firstSegment: number;
}

/**
 * One part of a stream: every rung of its stretch of the source, its segments numbered where it
 * sits in the stream. The source's clock is kept (`-copyts`), so each frame falls in exactly one
 * part by its time (trim from half a frame before the part's first frame to half a frame before
 * the next part's), and the parts' segments follow one another on one timeline.
 */
export function partStreamCommand(recipe: LadderRecipe, part: StreamPartInput, outDir: string): FfmpegCommand {
  const { video } = part;
  const rungs = streamRungs(recipe, video.height);
  const half = 0.5 / video.fps;
  const at = (seconds: number) => (video.start + seconds - (seconds > 0 ? half : 0)).toFixed(6);
  const trim = `trim=start=${at(part.from)}${part.to === undefined ? "" : `:end=${at(part.to)}`}`;
  // The seek (from the file's start) lands on a keyframe a little before the part; the trim cuts exactly.
  const seek = part.from > 0 ? ["-ss", Math.max(0, part.from - SEEK_LEAD_SECONDS).toFixed(6)] : [];
  return {
    args: [
      ...head([{ ...part.source, options: [...(part.source.options ?? []), ...seek] }]),
      "-copyts",
      "-filter_complex",
      ladderFilter(`[0:${video.index}]${trim},`, rungs),
      ...rungs.flatMap((_, i) => ["-map", `[v${i}]`]),
      ...rungEncoding(recipe, video.fps),
      ...rungRateArgs(rungs),
      ...streamOutput(outDir, recipe, {
        renditions: rungs.map(renditionName),
        startNumber: part.firstSegment,
        clockStart: video.start,
      }),
    ],
  };
}

/** The audio rendition of a whole source, on the source's clock as the parts' video is, beside them. */
export function audioStreamCommand(
  recipe: LadderRecipe,
  input: { source: FfmpegInput; audioIndex: number; videoStart: number; sourceHeight: number },
  outDir: string,
): FfmpegCommand {
  return {
    args: [
      ...head([input.source]),
      "-copyts",
      "-map",
      `0:${input.audioIndex}`,
      ...audioEncoding(recipe, input.sourceHeight),
      ...streamOutput(outDir, recipe, { renditions: [AUDIO_RENDITION], startNumber: 0, clockStart: input.videoStart }),
    ],
  };
}
