import { join } from "node:path";
import type { SubtitleSidecarRecipe } from "../../../domain/presets/recipes";
import type { SubtitleStreamInfo } from "../probe";
import { head, kbit, requireVideo, videoAudioArgs, type BuildContext, type FfmpegCommand } from "./command";
import { faststart } from "./containers";
import { videoEncoderArgs } from "./video-encoder";

const SIDECAR_VIDEO = "video.mp4";

/** `subtitle_1.eng.vtt`: numbered in source order, language when the track has one. */
function sidecarName(track: SubtitleStreamInfo, ordinal: number): string {
  const language = track.language?.toLowerCase().replace(/[^a-z0-9-]/g, "");
  return `subtitle_${ordinal}${language ? `.${language}` : ""}.vtt`;
}

/**
 * One process writes the web MP4 and a WebVTT file per text subtitle track. The MP4 is
 * re-encoded rather than copied: a subtitled source is often MKV with codecs an MP4 player
 * cannot play. Bitmap tracks (PGS, VobSub) cannot become text and are skipped. Timings come
 * straight from the source: a remux through MKV first would shift them.
 */
export function subtitleSidecarCommand(
  ctx: BuildContext,
  recipe: SubtitleSidecarRecipe,
): { command: FfmpegCommand; sidecars: string[] } {
  const video = requireVideo(ctx);
  const audio = ctx.probe.audio[0];
  const tracks = ctx.probe.subtitles.filter((s) => s.textBased);
  const sidecars = tracks.map((t, i) => sidecarName(t, i + 1));
  const { maxWidth, maxHeight } = recipe;
  return {
    command: {
      args: [
        ...head(ctx.input),
        "-map",
        `0:${video.index}`,
        ...(audio ? ["-map", `0:${audio.index}`] : []),
        "-vf",
        // Fit in maxWidth × maxHeight without upscaling a smaller source.
        `scale=w='min(${maxWidth},iw)':h='min(${maxHeight},ih)':force_original_aspect_ratio=decrease:force_divisible_by=2,format=yuv420p`,
        ...videoEncoderArgs({ encoder: recipe.video, rate: { crf: recipe.crf }, isoBmff: true }),
        ...(audio ? videoAudioArgs(recipe.audioCodec, kbit(recipe.audioBitrate)) : []),
        ...faststart("mp4"),
        join(ctx.outDir, SIDECAR_VIDEO),
        ...tracks.flatMap((t, i) => [
          "-map",
          `0:${t.index}`,
          "-c:s",
          "webvtt",
          "-f",
          "webvtt",
          join(ctx.outDir, sidecars[i]),
        ]),
      ],
    },
    sidecars,
  };
}
