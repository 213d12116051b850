import type { z } from "@hono/zod-openapi";
import type { Job as JobRow } from "../../../drizzle/schema";
import { isCancellable } from "../../../domain/jobs";
import { iso } from "../../../domain/time";
import type { OutputState } from "../../lib/output-links";
import type { Job, JobListItem } from "./schema";

export const API_PREFIX = "/api/v1";
export const jobPath = (id: string) => `${API_PREFIX}/jobs/${id}`;

function signed(output: OutputState) {
  return output.kind === "signed"
    ? { outputUrl: output.link.url, expiration: iso(output.link.expiresAt) }
    : { outputUrl: null, expiration: null };
}

/** GET /jobs/{id} (spec, Job, full read). */
export function presentJob(job: JobRow, output: OutputState): z.infer<typeof Job> {
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
      createdAt: iso(job.createdAt)!,
      startedAt: iso(job.startedAt),
      completedAt: iso(job.completedAt),
      lastCheckedAt: iso(job.lastCheckedAt),
    },
    clientMetadata: job.clientMetadata ?? {},
    links: {
      self: jobPath(job.id),
      ...(isCancellable(job.status) && { cancel: jobPath(job.id) }),
      ...(output.kind === "signed" && { output: `${jobPath(job.id)}/download-url` }),
    },
  };
}

/** GET /jobs item: no retryCount, lifecycle timestamps at the top level (spec, Job, list item). */
export function presentListItem(job: JobRow, output: OutputState): z.infer<typeof JobListItem> {
  return {
    id: job.id,
    status: job.status,
    preset: job.preset,
    inputUrl: job.inputUrl,
    ...signed(output),
    duration: job.duration,
    errorMessage: job.errorMessage,
    createdAt: iso(job.createdAt)!,
    startedAt: iso(job.startedAt),
    completedAt: iso(job.completedAt),
    links: { self: jobPath(job.id) },
  };
}
