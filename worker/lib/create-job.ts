import { eq } from "drizzle-orm";
import { jobs, type Job } from "../../drizzle/schema";
import { quotaPeriod } from "../../domain/time";
import type { Caller, Services } from "../context";
import { monthlyQuota } from "../env";
import { claimQuotaUnit, releaseQuotaUnit } from "./quota";

export interface NewJobInput {
  preset: string;
  inputUrl: string;
  clientMetadata?: Record<string, unknown> | null;
  edl?: unknown;
}

/**
 * The creation flow both POST /jobs and POST /edl share: claim a quota unit and insert the
 * queued job in one transaction, then hand the job to the queue. A job the queue refuses is
 * marked failed and its unit released (spec, States and transitions, rows 1 and 2).
 */
export async function createQueuedJob(
  services: Services,
  caller: Caller,
  input: NewJobInput,
): Promise<{ job: Job; remainingJobs: number }> {
  const { db, queue, env } = services;
  const now = new Date();
  const period = quotaPeriod(now);
  const limit = monthlyQuota(env, caller.plan);

  const { job, used } = await db.transaction(async (tx) => {
    const used = await claimQuotaUnit(tx, caller.accountId, period, limit, caller.plan);
    const [job] = await tx
      .insert(jobs)
      .values({
        accountId: caller.accountId,
        status: "queued",
        preset: input.preset,
        inputUrl: input.inputUrl,
        clientMetadata: input.clientMetadata ?? null,
        edl: input.edl ?? null,
        quotaPeriod: period,
        createdAt: now,
      })
      .returning();
    return { job, used };
  });

  let messageId: string;
  try {
    messageId = await queue.publishJob(job.id);
  } catch (err) {
    await db
      .update(jobs)
      .set({ status: "failed", errorMessage: "The job could not be queued; its quota unit was returned. Please retry." })
      .where(eq(jobs.id, job.id));
    await releaseQuotaUnit(db, caller.accountId, period);
    throw err;
  }
  await db.update(jobs).set({ messageId }).where(eq(jobs.id, job.id));
  return { job: { ...job, messageId }, remainingJobs: Math.max(0, limit - used) };
}
