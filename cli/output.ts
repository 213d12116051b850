import type { Created, CreatedEdlJob, CreatedJob, EdlValidation, Job, JobList, PresetCatalogue } from "../client";

/** Human-readable renderings; `--json` prints the API objects unchanged instead. */

export function describeCreated(job: Created<CreatedJob | CreatedEdlJob>): string {
  const what =
    "preset" in job ? `preset ${job.preset}` : `timeline (${job.stats.clips} clips, ${job.stats.duration} s)`;
  const estimate = "estimatedProcessingTime" in job ? job.estimatedProcessingTime : job.estimate.processingTime;
  if (job.replayed)
    return `job ${job.id} was already created with this --idempotency-key (the first answer, replayed: no new job, no quota unit); ${what}`;
  return `created job ${job.id} (${job.status}), ${what}; estimated ${estimate}; ${job.user.remainingJobs} jobs left this month`;
}

export function describeJob(job: Job): string {
  const lines = [
    `id          ${job.id}`,
    `status      ${job.status}${job.status === "processing" && job.progress !== null ? ` (${Math.round(job.progress * 100)}%)` : ""}`,
    `preset      ${job.preset}`,
    `input       ${job.inputUrl}`,
    `created     ${job.metadata.createdAt}`,
  ];
  if (job.metadata.completedAt) lines.push(`completed   ${job.metadata.completedAt}`);
  if (job.duration !== null) lines.push(`duration    ${job.duration} s`);
  if (job.errorMessage) lines.push(`error       ${job.errorMessage}`);
  if (job.retryCount) lines.push(`retries     ${job.retryCount}`);
  if (job.outputUrl) lines.push(`output      ${job.outputUrl}`, `expires     ${job.expiration}`);
  if (job.playbackUrl) lines.push(`playback    ${job.playbackUrl}`);
  return lines.join("\n");
}

export function describeJobList(list: JobList): string {
  const { page, totalPages, totalCount } = list.pagination;
  const rows = list.jobs.map((j) => [j.id, j.status.padEnd(10), j.preset.padEnd(28), j.createdAt].join("  "));
  return [...rows, `page ${page} of ${Math.max(totalPages, 1)} (${totalCount} jobs)`].join("\n");
}

export function describePresets(catalogue: PresetCatalogue): string {
  const rows = catalogue.presets.map((p) =>
    [p.id.padEnd(28), p.category.padEnd(9), p.requiredPlan.padEnd(10), p.available ? "available" : "locked"].join("  "),
  );
  const { userPlan, availablePresets, totalPresets } = catalogue.meta;
  return [...rows, `${availablePresets} of ${totalPresets} presets available on the ${userPlan} plan`].join("\n");
}

export function describeValidation(result: EdlValidation): string {
  const { stats, estimate } = result;
  const summary = `${stats.clips} clips, ${stats.tracks} tracks, ${stats.duration} s, ${stats.assets} assets; ${stats.complexity}; estimated ${estimate.processingTime}`;
  return [
    result.valid ? `valid: ${summary}` : `invalid: ${summary}`,
    ...(result.errors ?? []).map((e) => `  error: ${e}`),
    ...(result.warnings ?? []).map((w) => `  warning: ${w}`),
  ].join("\n");
}

/** How many of a refusal's problems the one-line message shows. */
const SHOWN_PROBLEMS = 3;

/**
 * What a refusal names, for the one-line message: a Validation error's fields (`inputUrl: Invalid
 * input URL`) or an invalid timeline's errors, the first few and how many more, so the line says
 * what to fix without a second command.
 */
export function describeDetails(body: unknown): string {
  if (typeof body !== "object" || body === null) return "";
  const { details, errors } = body as { details?: unknown; errors?: unknown };
  const fields = (Array.isArray(details) ? details : [])
    .filter(
      (d): d is { field: string; message: string } => typeof d?.field === "string" && typeof d?.message === "string",
    )
    .map((d) => `${d.field}: ${d.message}`);
  const problems = [
    ...fields,
    ...(Array.isArray(errors) ? errors : []).filter((e): e is string => typeof e === "string"),
  ];
  if (problems.length === 0) return "";
  const more = problems.length > SHOWN_PROBLEMS ? [`and ${problems.length - SHOWN_PROBLEMS} more`] : [];
  return ` (${[...problems.slice(0, SHOWN_PROBLEMS), ...more].join("; ")})`;
}
