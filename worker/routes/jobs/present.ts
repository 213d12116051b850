import type { z } from "@hono/zod-openapi";
import { isCancellable } from "../../../domain/jobs";
import { iso } from "../../../domain/time";
import type { ListedJob, PresentedJob } from "../../lib/job-columns";
import type { OutputState } from "../../lib/output-links";
import type { PlaybackLink } from "../../lib/playback-links";
import type { Job, JobListItem } from "./schema";

export const API_PREFIX = "/api/v1";
export const jobPath = (id: string) => `${API_PREFIX}/jobs/${id}`;

/** What a job's read and a list item both open with, in this order. */
function outline(job: ListedJob, output: OutputState, playback: PlaybackLink | null) {
  return {
    id: job.id,
    status: job.status,
    preset: job.preset,
    inputUrl: job.inputUrl,
    ...(output.kind === "signed"
      ? { outputUrl: output.link.url, expiration: iso(output.link.expiresAt) }
      : { outputUrl: null, expiration: null }),
    playbackUrl: playback?.url ?? null,
    duration: job.duration,
    errorMessage: job.errorMessage,
  };
}

/** GET /jobs/{id} (docs/contract.md §3.1). */
export function presentJob(job: PresentedJob, output: OutputState, playback: PlaybackLink | null): z.infer<typeof Job> {
  return {
    ...outline(job, output, playback),
    retryCount: job.retryCount,
    progress: job.progress,
    metadata: {
      createdAt: iso(job.createdAt),
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

/** GET /jobs item: no retryCount, lifecycle timestamps at the top level (docs/contract.md §3.3). */
export function presentListItem(
  job: ListedJob,
  output: OutputState,
  playback: PlaybackLink | null,
): z.infer<typeof JobListItem> {
  return {
    ...outline(job, output, playback),
    createdAt: iso(job.createdAt),
    startedAt: iso(job.startedAt),
    completedAt: iso(job.completedAt),
    links: { self: jobPath(job.id) },
  };
}
