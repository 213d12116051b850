import type { Job } from "../../../drizzle/schema";
import { isCancellable } from "../../../domain/jobs";
import { iso } from "../../../domain/time";
import type { OutputState } from "../../lib/output-links";

export const API_PREFIX = "/api/v1";
export const jobPath = (id: string) => `${API_PREFIX}/jobs/${id}`;

function signed(output: OutputState) {
  return output.kind === "signed"
    ? { outputUrl: output.link.url, expiration: iso(output.link.expiresAt) }
    : { outputUrl: null, expiration: null };
}

/** GET /jobs/{id} (spec, Job, full read). */
export function presentJob(job: Job, output: OutputState) {
  const links: Record<string, string> = { self: jobPath(job.id) };
  if (isCancellable(job.status)) links.cancel = jobPath(job.id);
  if (output.kind === "signed") links.output = `${jobPath(job.id)}/download-url`;
  return {
    id: job.id,
    status: job.status,
    preset: job.preset,
    inputUrl: job.inputUrl,
    ...signed(output),
    duration: job.duration,
    errorMessage: job.errorMessage,
    retryCount: job.retryCount,
    progress: job.progress,
    metadata: {
      createdAt: iso(job.createdAt),
      startedAt: iso(job.startedAt),
      completedAt: iso(job.completedAt),
      lastCheckedAt: iso(job.lastCheckedAt),
    },
    clientMetadata: job.clientMetadata ?? {},
    links,
  };
}

/** GET /jobs item: no retryCount, lifecycle timestamps at the top level (spec, Job, list item). */
export function presentListItem(job: Job, output: OutputState) {
  return {
    id: job.id,
    status: job.status,
    preset: job.preset,
    inputUrl: job.inputUrl,
    ...signed(output),
    duration: job.duration,
    errorMessage: job.errorMessage,
    createdAt: iso(job.createdAt),
    startedAt: iso(job.startedAt),
    completedAt: iso(job.completedAt),
    links: { self: jobPath(job.id) },
  };
}
