import { join } from "node:path";
import type { ProgressiveRecipe } from "../../../domain/presets/recipes";
import type { VideoStreamInfo } from "../probe";
import { head, kbit, requireVideo, videoAudioArgs, type BuildContext, type FfmpegCommand } from "./command";
import { faststart, isIsoBmff } from "./containers";
import { even } from "./sizes";
import { videoEncoderArgs, type RateControl } from "./video-encoder";

/**
 * `contain`: the largest size inside the box with the source's display aspect, rounded to even
 * numbers (a 16:9 source fills 854x480 exactly, where scale's own rounding gives 852), square
 * pixels. `cover` fills the box and crops the centre. Both end in 8-bit 4:2:0, the only format
 * every hardware decoder plays.
 */
export function frameFilter(
  fit: ProgressiveRecipe["fit"],
  box: ProgressiveRecipe["size"],
  source: Pick<VideoStreamInfo, "width" | "height" | "sampleAspect">,
): string {
  const { width, height } = box;
  if (fit === "cover") {
    return `scale=${width}:${height}:force_original_aspect_ratio=increase,crop=${width}:${height},setsar=1,format=yuv420p`;
  }
  const aspect = (source.width * source.sampleAspect) / source.height;
  const size = aspect >= width / height ? [width, even(width / aspect)] : [even(height * aspect), height];
  return `scale=${size[0]}:${size[1]},setsar=1,format=yuv420p`;
}

/** A single-file preset's rate control: its CRF, capped by its VBV when it has one. */
export function progressiveRate({ crf, maxrate, bufsizeFactor }: ProgressiveRecipe): RateControl {
  return {
    crf,
    ...(maxrate === undefined ? {} : { cap: { maxrate: kbit(maxrate), bufsize: kbit(maxrate * bufsizeFactor) } }),
  };
}

/** The eight single-file presets: MP4 (H.264, HEVC) or WebM (VP9 + Opus) at a fixed resolution. */
export function progressiveCommand(ctx: BuildContext, recipe: ProgressiveRecipe, outputFile: string): FfmpegCommand {
  const video = requireVideo(ctx);
  const audio = ctx.probe.audio[0];
  const { container } = recipe;
  const rate = progressiveRate(recipe);
  return {
    args: [
      ...head(ctx.input),
      "-map",
      `0:${video.index}`,
      ...(audio ? ["-map", `0:${audio.index}`] : []),
      "-vf",
      frameFilter(recipe.fit, recipe.size, video),
      ...videoEncoderArgs({ encoder: recipe.video, rate, isoBmff: isIsoBmff(container) }),
      ...(audio ? videoAudioArgs(recipe.audioCodec, kbit(recipe.audioBitrate)) : []),
      ...faststart(container),
      join(ctx.outDir, outputFile),
    ],
  };
}
