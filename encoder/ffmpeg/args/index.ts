import { findDefinition } from "../../../domain/presets/definitions";
import type { ProbeSummary } from "../probe";
import { mp3Command, denoiseCommand, loudnormFilterPlan, podcastPlan, type TwoPass } from "./audio";
import type { BuildContext, FfmpegCommand } from "./command";
import { CONTENT_TYPES, type Container } from "./containers";
import { progressiveCommand } from "./progressive";
import { SPRITE_VTT, spritePlan, thumbnailsCommand } from "./stills";
import { subtitleSidecarCommand } from "./subtitles";

export type { FfmpegCommand } from "./command";

/** What the encoder does, in order, for one preset. Building it runs nothing. */
export type PlanStep =
  | { kind: "run"; command: FfmpegCommand }
  /** Run `measure`, parse its loudnorm report from stderr, then run `apply(measurement)`. */
  | ({ kind: "two-pass" } & TwoPass)
  /** A file computed from known values (the sprite's WebVTT), relative to the out dir. */
  | { kind: "write-text"; file: string; text: string }
  /** WebVTT files FFmpeg wrote whose cue text needs escaping (see escapeVttCueText). */
  | { kind: "escape-vtt"; files: string[] };

/** The single file to upload, or a ZIP of everything the out dir holds (docs/contract.md §3.9). */
export type PlannedOutput = { kind: "file"; file: string; contentType: string } | { kind: "zip" };

export interface PresetCommands {
  steps: PlanStep[];
  output: PlannedOutput;
}

const fileOutput = (container: Container) =>
  ({ kind: "file", file: `output.${container}`, contentType: CONTENT_TYPES[container] }) satisfies PlannedOutput;

/**
 * The FFmpeg plan for `presetId` on a probed local source. Pure: arguments only, from the
 * preset's recipe and the probe. Throws a non-retryable error when the source lacks a
 * stream the preset needs (audio presets on a silent video, video presets on audio).
 */
export function buildPresetCommands(
  presetId: string,
  source: { input: string; outDir: string; probe: ProbeSummary },
): PresetCommands {
  const recipe = findDefinition(presetId)?.recipe;
  if (!recipe) throw new Error(`Unknown preset ${presetId}`);
  const ctx: BuildContext = { presetId, ...source };
  switch (recipe.kind) {
    case "progressive": {
      const output = fileOutput(recipe.container);
      return { steps: [{ kind: "run", command: progressiveCommand(ctx, recipe, output.file) }], output };
    }
    case "ladder":
      // A ladder is a stream, its segments stored as they are made: encoder/stream/ makes it.
      throw new Error(`${presetId} is a streaming preset: encoder/stream encodes it (docs/playback.md)`);
    case "podcast": {
      const output = fileOutput(recipe.container);
      return { steps: [{ kind: "two-pass", ...podcastPlan(ctx, recipe, output.file) }], output };
    }
    case "mp3": {
      const output = fileOutput(recipe.container);
      return { steps: [{ kind: "run", command: mp3Command(ctx, recipe, output.file) }], output };
    }
    case "audio-filter": {
      const { filter } = recipe;
      const output = fileOutput(recipe.container);
      const step: PlanStep =
        filter.type === "loudnorm"
          ? { kind: "two-pass", ...loudnormFilterPlan(ctx, { ...recipe, filter }, output.file) }
          : { kind: "run", command: denoiseCommand(ctx, { ...recipe, filter }, output.file) };
      return { steps: [step], output };
    }
    case "thumbnails":
      return { steps: [{ kind: "run", command: thumbnailsCommand(ctx, recipe) }], output: { kind: "zip" } };
    case "sprite": {
      const { command, vtt } = spritePlan(ctx, recipe);
      return {
        steps: [
          { kind: "run", command },
          { kind: "write-text", file: SPRITE_VTT, text: vtt },
        ],
        output: { kind: "zip" },
      };
    }
    case "subtitle-sidecars": {
      const { command, sidecars } = subtitleSidecarCommand(ctx, recipe);
      const steps: PlanStep[] = [{ kind: "run", command }];
      if (sidecars.length > 0) steps.push({ kind: "escape-vtt", files: sidecars });
      return { steps, output: { kind: "zip" } };
    }
  }
}
