import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { jobs, type Job } from "../../../drizzle/schema";
import { type JobStatus, outputKeyParts } from "../../../domain/jobs";
import { isUuid } from "../../../domain/ids";
import type { AppEnv } from "../../context";
import { ApiError, logJobError } from "../../errors";
import { publishDispatch } from "../../lib/dispatch";
import { claimJob, movedJob, notifyAfterResponse } from "../../lib/encoder-moves";
import * as jobStates from "../../lib/job-states";
import { jsonBody } from "../../lib/json-body";
import { sweep } from "../../lib/sweep";
import { waitUntilOf } from "../../lib/wait-until";
import type { Services } from "../../services";
import { claimBody, completeBody, failBody, heartbeatBody } from "./schema";
import { verifyEncoder } from "./verify";

/**
 * A report the encoder sends again because it did not hear the first answer (a network error,
 * the Worker failing after the commit) finds the job already where the report would put it.
 * That is the same report, so it is answered as the first was, and the job's webhook, should
 * it still be in the outbox, is published now rather than at the next sweep.
 */
async function repeatedReport(
  services: Services,
  jobId: string,
  outcome: jobStates.TransitionOutcome,
  to: JobStatus,
  same: (job: Job) => boolean,
) {
  if (outcome.moved || outcome.found !== to) return null;
  const [job] = await services.db.select().from(jobs).where(eq(jobs.id, jobId));
  return job && same(job) ? job : null;
}

/**
 * The retry's dispatch, held back from the source that just failed: the first retry waits
 * JOB_RETRY_DELAY_SECONDS, the next twice that. A publish that fails leaves the job queued
 * without a message, which the sweep dispatches (lib/sweep.ts).
 */
async function dispatchRetry(services: Services, job: Job) {
  const delaySeconds = services.env.JOB_RETRY_DELAY_SECONDS * 2 ** (job.retryCount - 1);
  try {
    await jobStates.recordMessage(services.db, job.id, await publishDispatch(services.queue, job, { delaySeconds }));
  } catch (err) {
    logJobError("the retry could not be dispatched; the sweep dispatches it", job.id, err);
  }
}

/**
 * A completion refused while the job is still processing was another claim's (a 409 follows) or
 * named an output that is not the job's own: a 400, whichever claim sent it.
 */
async function refuseOthersOutput(services: Services, jobId: string, outputKey: string) {
  const own = outputKeyParts(outputKey);
  const [job] = await services.db.select({ accountId: jobs.accountId }).from(jobs).where(eq(jobs.id, jobId));
  if (own?.jobId === jobId && own.accountId === job?.accountId) return;
  throw ApiError.validation([
    { field: "outputKey", message: "Not this job's output: the key must name its account and its id" },
  ]);
}

/** The encoder's side of the state table (lib/job-states/, its claim in lib/encoder-moves.ts). */
export const internalJobs = new Hono<AppEnv>()
  .use(verifyEncoder)
  // Postgres refuses a malformed uuid with an error: such an id names no job.
  .use("/jobs/:id/*", async (c, next) => {
    if (!isUuid(c.req.param("id"))) throw ApiError.notFound();
    await next();
  })
  .post("/jobs/:id/claim", jsonBody(claimBody), async (c) => {
    const { dispatch } = c.req.valid("json");
    const { job } = await claimJob(c.get("services"), c.req.param("id"), dispatch, "whole", waitUntilOf(c));
    return c.json({ job });
  })
  .post("/jobs/:id/heartbeat", jsonBody(heartbeatBody), async (c) => {
    const { claim, ...beat } = c.req.valid("json");
    const job = movedJob(await jobStates.heartbeat(c.get("services").db, c.req.param("id"), claim, beat));
    return c.json({ status: job.status });
  })
  .post("/jobs/:id/complete", jsonBody(completeBody), async (c) => {
    const services = c.get("services");
    const id = c.req.param("id");
    const { claim, ...report } = c.req.valid("json");
    const outcome = await jobStates.complete(services.db, id, claim, report);
    if (!outcome.moved && outcome.found === "processing") await refuseOthersOutput(services, id, report.outputKey);
    const job =
      (await repeatedReport(
        services,
        id,
        outcome,
        "completed",
        (j) => j.lease === claim && j.outputKey === report.outputKey,
      )) ?? movedJob(outcome);
    if (job.webhookPendingSince) notifyAfterResponse(services, job, waitUntilOf(c));
    return c.json({ status: job.status });
  })
  .post("/jobs/:id/fail", jsonBody(failBody), async (c) => {
    const services = c.get("services");
    const { claim, errorMessage, retryable, duration } = c.req.valid("json");
    const id = c.req.param("id");
    const failure = { errorMessage, duration: duration ?? null };
    // A retry only while attempts at the source remain (retry's own condition); otherwise the job fails.
    const retried = retryable ? await jobStates.retry(services.db, id, claim) : null;
    const outcome =
      retried && (retried.moved || retried.found !== "processing")
        ? retried
        : await jobStates.fail(services.db, id, claim, failure);
    if (outcome.moved && outcome.job.status === "queued") {
      await dispatchRetry(services, outcome.job);
      return c.json({ status: outcome.job.status });
    }
    const repeated =
      (await repeatedReport(
        services,
        id,
        outcome,
        "failed",
        (j) => j.lease === claim && j.errorMessage === errorMessage,
      )) ??
      // This report's retry: a job the sweep took back (a new lease) or claimed again since is not its to answer for.
      (await repeatedReport(services, id, outcome, "queued", (j) => j.lease === claim));
    const job = repeated ?? movedJob(outcome);
    if (job.webhookPendingSince) notifyAfterResponse(services, job, waitUntilOf(c));
    return c.json({ status: job.status });
  })
  .post("/sweep", async (c) => c.json(await sweep(c.get("services"))));
