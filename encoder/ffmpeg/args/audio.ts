import { join } from "node:path";
import type { AudioFilterRecipe, Mp3Recipe, PodcastRecipe } from "../../../domain/presets/recipes";
import { head, outputChannels, requireAudio, type BuildContext, type FfmpegCommand } from "./command";
import { HVC1_TAG, faststart, isIsoBmff } from "./containers";
import { loudnormApplyFilter, loudnormMeasureFilter, type LoudnormMeasurement } from "./loudness";

/** A command whose arguments depend on what a first, measuring command found. */
export interface TwoPass {
  measure: FfmpegCommand;
  apply(measurement: LoudnormMeasurement): FfmpegCommand;
}

/** Downmix before measuring, so both passes see the very audio that is encoded. */
function layoutFilter(channels: number): string {
  return `aformat=channel_layouts=${channels === 1 ? "mono" : "stereo"}`;
}

/** loudnorm resamples to 192 kHz internally and outputs that unless told otherwise. */
const RATE_48K = ["-ar", "48000"];

/** Speech to −16 LUFS (the podcast platforms' level) in an M4A, measured then applied. */
export function podcastPlan(ctx: BuildContext, recipe: PodcastRecipe, outputFile: string): TwoPass {
  const audio = requireAudio(ctx);
  const channels = outputChannels(audio);
  const layout = layoutFilter(channels);
  const bitrate = channels === 1 ? recipe.bitrateMono : recipe.bitrateStereo;
  return {
    measure: {
      args: [
        ...head(ctx.input, "info"),
        "-map",
        `0:${audio.index}`,
        "-af",
        `${layout},${loudnormMeasureFilter(recipe.loudness)}`,
        "-f",
        "null",
        "-",
      ],
    },
    apply: (m) => ({
      args: [
        ...head(ctx.input),
        "-map",
        `0:${audio.index}`,
        "-af",
        `${layout},${loudnormApplyFilter(recipe.loudness, m)}`,
        ...RATE_48K,
        "-c:a",
        recipe.audioCodec,
        "-b:a",
        `${bitrate}k`,
        ...faststart(recipe.container),
        join(ctx.outDir, outputFile),
      ],
    }),
  };
}

export function mp3Command(ctx: BuildContext, recipe: Mp3Recipe, outputFile: string): FfmpegCommand {
  const audio = requireAudio(ctx);
  return {
    args: [
      ...head(ctx.input),
      "-map",
      `0:${audio.index}`,
      "-c:a",
      recipe.audioCodec,
      "-q:a",
      String(recipe.vbrQuality),
      "-ac",
      String(outputChannels(audio)),
      // ID3v2.3: the version older players and Windows read (FFmpeg writes 2.4 by default).
      "-id3v2_version",
      "3",
      join(ctx.outDir, outputFile),
    ],
  };
}

/** Video copied untouched (tagged hvc1 if HEVC), the first audio track processed to AAC. */
function audioFilterArgs(ctx: BuildContext, recipe: AudioFilterRecipe, filter: string, outputFile: string): string[] {
  const audio = requireAudio(ctx);
  const { video } = ctx.probe;
  return [
    ...head(ctx.input),
    ...(video
      ? [
          "-map",
          `0:${video.index}`,
          "-c:v",
          "copy",
          ...(video.codec === "hevc" && isIsoBmff(recipe.container) ? HVC1_TAG : []),
        ]
      : []),
    "-map",
    `0:${audio.index}`,
    "-af",
    filter,
    ...RATE_48K,
    "-c:a",
    recipe.audioCodec,
    "-b:a",
    `${recipe.audioBitrate}k`,
    ...faststart(recipe.container),
    join(ctx.outDir, outputFile),
  ];
}

export function denoiseCommand(
  ctx: BuildContext,
  recipe: AudioFilterRecipe & { filter: { type: "denoise" } },
  outputFile: string,
): FfmpegCommand {
  const channels = outputChannels(requireAudio(ctx));
  return { args: audioFilterArgs(ctx, recipe, `${layoutFilter(channels)},${recipe.filter.afftdn}`, outputFile) };
}

/** EBU R128: −23 LUFS, measured then applied; the picture is copied in the second pass only. */
export function loudnormFilterPlan(
  ctx: BuildContext,
  recipe: AudioFilterRecipe & { filter: { type: "loudnorm" } },
  outputFile: string,
): TwoPass {
  const audio = requireAudio(ctx);
  const layout = layoutFilter(outputChannels(audio));
  const { loudness } = recipe.filter;
  return {
    measure: {
      args: [
        ...head(ctx.input, "info"),
        "-map",
        `0:${audio.index}`,
        "-af",
        `${layout},${loudnormMeasureFilter(loudness)}`,
        "-f",
        "null",
        "-",
      ],
    },
    apply: (m) => ({ args: audioFilterArgs(ctx, recipe, `${layout},${loudnormApplyFilter(loudness, m)}`, outputFile) }),
  };
}
