import { eq } from "drizzle-orm";
import { jobs } from "../../drizzle/schema";
import { admin, completeJob, createJob, failEveryAttempt, internal, objectUrl, s3 } from "./harness";

/**
 * One real job in each state the reference's examples are about, keyed by the example names of
 * worker/routes/jobs/examples.ts (EXAMPLE_JOB_IDS). Six quota units: use a paid plan.
 */
export async function jobsInEveryState(apiKey: string, accountId: string) {
  const [queued, processing, completed, failed, outputRemoved, legacy] = await Promise.all(
    Array.from({ length: 6 }, () => createJob(apiKey)),
  );
  await internal(`/jobs/${processing.id}/claim`, { dispatch: 0 });
  await completeJob(completed.id, accountId);
  await failEveryAttempt(failed.id, "Download failed: the source answered HTTP 404");
  const removedKey = await completeJob(outputRemoved.id, accountId);
  await s3.fetch(objectUrl(removedKey), { method: "DELETE" });
  await completeJob(legacy.id, accountId);
  await admin.db
    .update(jobs)
    .set({ storageLayout: "legacy", outputKey: `legacy-bucket/${legacy.id}.mp4` })
    .where(eq(jobs.id, legacy.id));
  return {
    queued: queued.id,
    processing: processing.id,
    completed: completed.id,
    failed: failed.id,
    outputRemoved: outputRemoved.id,
    legacy: legacy.id,
  };
}
