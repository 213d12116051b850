import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { buildPresetCommands, type PlanStep } from "./args";
import { escapeVttCueText } from "./args/webvtt";
import { parseLoudnormMeasurement } from "./args/loudness";
import { collectOutput, type JobOutput } from "./outputs";
import type { ProbeSummary } from "./probe";
import { runFfmpeg, type FfmpegRunOptions } from "./run";

export interface EncodePresetOptions {
  presetId: string;
  /** Local path of the downloaded source. */
  input: string;
  /** Empty directory for the outputs; a ZIP preset uploads everything in it. */
  outDir: string;
  probe: ProbeSummary;
  signal?: AbortSignal;
  onProgress?(fraction: number): void;
  log?: FfmpegRunOptions["log"];
  /** Hidden from error messages (defaults to the out dir). */
  workDir?: string;
  watchdog?: FfmpegRunOptions["watchdog"];
}

const ffmpegRuns = (steps: PlanStep[]) =>
  steps.reduce((n, s) => n + (s.kind === "run" ? 1 : s.kind === "two-pass" ? 2 : 0), 0);

/** Runs a preset's plan and says what to upload. Progress is shared equally between FFmpeg runs. */
export async function encodePreset(options: EncodePresetOptions): Promise<JobOutput> {
  const { presetId, input, outDir, probe, signal } = options;
  const plan = buildPresetCommands(presetId, { input, outDir, probe });
  const total = ffmpegRuns(plan.steps);
  let done = 0;
  const run = async (args: string[]) => {
    const base = done;
    const result = await runFfmpeg(args, {
      signal,
      workDir: options.workDir ?? outDir,
      watchdog: options.watchdog,
      durationSeconds: probe.duration,
      onProgress: (f) => options.onProgress?.((base + f) / total),
      log: options.log,
    });
    done += 1;
    return result;
  };

  await mkdir(outDir, { recursive: true });
  for (const step of plan.steps) {
    switch (step.kind) {
      case "run":
        await run(step.command.args);
        break;
      case "two-pass": {
        const { stderr } = await run(step.measure.args);
        await run(step.apply(parseLoudnormMeasurement(stderr)).args);
        break;
      }
      case "write-text":
        await writeFile(join(outDir, step.file), step.text);
        break;
      case "escape-vtt":
        for (const file of step.files) {
          const path = join(outDir, file);
          await writeFile(path, escapeVttCueText(await readFile(path, "utf8")));
        }
        break;
    }
  }
  options.onProgress?.(1);
  return collectOutput(presetId, outDir, plan.output);
}
