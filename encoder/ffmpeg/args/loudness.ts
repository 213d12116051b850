import type { LoudnessTarget } from "../../../domain/presets/recipes";
import { JobFailure } from "../../failure";

/** loudnorm's first-pass report (print_format=json), as numbers. */
export interface LoudnormMeasurement {
  inputI: number;
  inputTp: number;
  inputLra: number;
  inputThresh: number;
  targetOffset: number;
}

/** loudnorm accepts a loudness range target of at most 50 LU. */
const MAX_LRA = 50;

/** First pass: measure only; the output is discarded. */
export function loudnormMeasureFilter(target: LoudnessTarget): string {
  return `loudnorm=I=${target.integrated}:TP=${target.truePeak}:LRA=${target.range}:print_format=json`;
}

/**
 * Second pass: apply the measured values in linear mode (one gain for the whole file, so the
 * dynamics stay as recorded). loudnorm only stays linear when the measured range fits in the
 * target range, so the target is raised above the measurement. It also needs the gained peak
 * to stay under the true-peak ceiling; when it would not (a quiet source with loud peaks),
 * loudnorm falls back to its dynamic mode, which still reaches the target loudness.
 */
export function loudnormApplyFilter(target: LoudnessTarget, m: LoudnormMeasurement): string {
  const range = Math.min(MAX_LRA, Math.max(target.range, Math.ceil(m.inputLra + 1)));
  return [
    `loudnorm=I=${target.integrated}`,
    `TP=${target.truePeak}`,
    `LRA=${range}`,
    `measured_I=${m.inputI}`,
    `measured_TP=${m.inputTp}`,
    `measured_LRA=${m.inputLra}`,
    `measured_thresh=${m.inputThresh}`,
    `offset=${m.targetOffset}`,
    "linear=true",
  ].join(":");
}

/** The last loudnorm JSON report in a pass's stderr. */
export function parseLoudnormMeasurement(stderr: string): LoudnormMeasurement {
  const start = stderr.lastIndexOf("{");
  const end = stderr.indexOf("}", start);
  if (start < 0 || end < 0) throw JobFailure.ffmpeg("FFmpeg did not report the loudness measurement of the source.");
  const raw = JSON.parse(stderr.slice(start, end + 1)) as Record<string, string>;
  const m = {
    inputI: Number(raw.input_i),
    inputTp: Number(raw.input_tp),
    inputLra: Number(raw.input_lra),
    inputThresh: Number(raw.input_thresh),
    targetOffset: Number(raw.target_offset),
  };
  // loudnorm reports -inf for digital silence: there is no loudness to normalise.
  if (!Object.values(m).every(Number.isFinite)) {
    throw JobFailure.unsuitableSource("The source audio is silent, so its loudness cannot be normalised.");
  }
  return m;
}
