import { PLAN_DISPLAY_NAMES } from "../../domain/plans";
import { JobFailure } from "../failure";
import type { ProbedSource } from "../ffmpeg/probe";
import type { ClaimedJob } from "../internal-api";
import type { RenderContext } from "./pipeline";

/** The probe's verdict as every preset job has it: logged, within the plan's longest source, the duration told. */
export function checkSource(job: ClaimedJob, ctx: RenderContext, { probe }: ProbedSource): void {
  ctx.log({ stage: "probe", probe });
  if (probe.duration > job.maxSourceSeconds)
    throw JobFailure.durationExceeded(probe.duration, job.maxSourceSeconds, PLAN_DISPLAY_NAMES[job.plan]);
  ctx.onDuration(probe.duration);
}
