import { canProcess, postStats, type EdlValidation } from "../../../domain/edl/validate";
import { PLAN_DISPLAY_NAMES, type PlanId } from "../../../domain/plans";
import { jobPath } from "../jobs/present";

/** PUT /edl's answer for a validation: the routes and the document's examples both present it here. */
export function presentEdlVerdict(result: EdlValidation, plan: PlanId) {
  return {
    valid: result.valid,
    ...(result.errors.length ? { errors: result.errors } : {}),
    ...(result.warnings.length ? { warnings: result.warnings } : {}),
    stats: result.stats,
    estimate: result.estimate,
    plan: { current: plan, canProcess: canProcess(result) },
  };
}

/** POST /edl's 201: the timeline job just queued. */
export function presentCreatedEdl(
  job: { id: string; createdAt: string; remainingJobs: number },
  result: EdlValidation,
  caller: { plan: PlanId; webhookUrl: string | null },
) {
  return {
    id: job.id,
    status: "queued" as const,
    type: "edl" as const,
    webhookUrl: caller.webhookUrl,
    createdAt: job.createdAt,
    stats: postStats(result.stats),
    estimate: result.estimate,
    links: { self: jobPath(job.id), cancel: jobPath(job.id) },
    user: { remainingJobs: job.remainingJobs, plan: PLAN_DISPLAY_NAMES[caller.plan] },
    ...(result.warnings.length ? { warnings: result.warnings } : {}),
  };
}
