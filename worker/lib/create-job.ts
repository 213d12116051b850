import { quotaPeriod } from "../../domain/time";
import type { Caller, Services } from "../context";
import { monthlyQuota } from "../env";
import * as jobStates from "./job-states";
import { quotaUsedUp } from "./refusals";

export interface NewJobInput {
  preset: string;
  inputUrl: string;
  clientMetadata?: Record<string, unknown> | null;
  edl?: unknown;
}

export interface CreatedJob {
  id: string;
  createdAt: Date;
  remainingJobs: number;
}

/**
 * The creation flow both POST /jobs and POST /edl share: claim a quota unit and insert the
 * queued job in one statement, then hand the job to the queue. A job the queue refuses is
 * marked failed and its unit released (spec, States and transitions, rows 1 and 2).
 */
export async function createQueuedJob(services: Services, caller: Caller, input: NewJobInput): Promise<CreatedJob> {
  const { db, queue, env } = services;
  const createdAt = new Date();
  const quota = { period: quotaPeriod(createdAt), limit: monthlyQuota(env, caller.plan) };

  const creation = await jobStates.create(
    db,
    { accountId: caller.accountId, preset: input.preset, inputUrl: input.inputUrl, clientMetadata: input.clientMetadata ?? null, edl: input.edl ?? null, createdAt },
    quota,
  );
  if (!creation.created) throw quotaUsedUp(caller.plan, quota.limit, creation.used);

  let messageId: string;
  try {
    messageId = await queue.publishJob(creation.jobId);
  } catch (err) {
    await jobStates.failUnqueued(db, creation.jobId, "The job could not be queued; its quota unit was returned. Please retry.");
    throw err;
  }
  await jobStates.recordMessage(db, creation.jobId, messageId);
  return { id: creation.jobId, createdAt, remainingJobs: Math.max(0, quota.limit - creation.used) };
}
