import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { accounts, jobs, type Job } from "../../../drizzle/schema";
import type { JobStatus } from "../../../domain/jobs";
import { isUuid } from "../../../domain/ids";
import { MAX_SOURCE_SECONDS } from "../../../domain/plans";
import type { AppEnv, Services } from "../../context";
import { ApiError, logJobError } from "../../errors";
import * as jobStates from "../../lib/job-states";
import { jsonBody } from "../../lib/json-body";
import { sweep } from "../../lib/sweep";
import { waitUntilOf } from "../../lib/wait-until";
import { notifyJobFinished } from "../../lib/webhooks";
import { claimBody, completeBody, failBody, heartbeatBody } from "./schema";
import { verifyEncoder } from "./verify";

/**
 * The job a move applied to; otherwise 404 for an unknown job, or 409, which tells the encoder to
 * stop: the job left the state it was working in (usually: cancelled).
 */
function movedJob(outcome: jobStates.TransitionOutcome): Job {
  if (outcome.moved) return outcome.job;
  if (!outcome.current) throw ApiError.notFound();
  throw ApiError.conflict(`Job is ${outcome.current}`, { status: outcome.current });
}

/**
 * The webhook goes out after the answer: the encoder's report is settled whatever the queue
 * does. A failure leaves the job in the webhook outbox, which the sweep empties.
 */
function notifyAfterResponse(
  services: Services,
  job: Pick<Job, "id" | "accountId" | "status">,
  wait: (work: Promise<unknown>) => void,
) {
  wait(
    notifyJobFinished(services, job).catch((err) =>
      logJobError("webhook publish failed; the sweep publishes it", job.id, err),
    ),
  );
}

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
  if (outcome.moved || outcome.current !== to) return null;
  const [job] = await services.db.select().from(jobs).where(eq(jobs.id, jobId));
  return job && same(job) ? job : null;
}

/** The encoder's side of the state table (lib/job-states.ts). */
export const internalJobs = new Hono<AppEnv>()
  .use(verifyEncoder)
  // Postgres refuses a malformed uuid with an error: such an id names no job.
  .use("/jobs/:id/*", async (c, next) => {
    if (!isUuid(c.req.param("id"))) throw ApiError.notFound();
    await next();
  })
  .post("/jobs/:id/claim", jsonBody(claimBody), async (c) => {
    const services = c.get("services");
    const claimed = movedJob(await jobStates.claim(services.db, c.req.param("id"), c.req.valid("json").attempt));
    const [account] = await services.db
      .select({ plan: accounts.plan })
      .from(accounts)
      .where(eq(accounts.id, claimed.accountId));
    return c.json({
      job: {
        id: claimed.id,
        /** The attempt the encoder is on; the last one (JOB_DELIVERY_RETRIES) reports failures as final. */
        attempt: claimed.retryCount,
        accountId: claimed.accountId,
        preset: claimed.preset,
        inputUrl: claimed.inputUrl,
        edl: claimed.edl,
        plan: account.plan,
        maxSourceSeconds: MAX_SOURCE_SECONDS[account.plan],
      },
    });
  })
  .post("/jobs/:id/heartbeat", jsonBody(heartbeatBody), async (c) => {
    const job = movedJob(await jobStates.heartbeat(c.get("services").db, c.req.param("id"), c.req.valid("json")));
    return c.json({ status: job.status });
  })
  .post("/jobs/:id/complete", jsonBody(completeBody), async (c) => {
    const services = c.get("services");
    const id = c.req.param("id");
    const report = c.req.valid("json");
    const outcome = await jobStates.complete(services.db, id, report);
    if (!outcome.moved && outcome.current === "processing")
      throw ApiError.validation([
        { field: "outputKey", message: "Not this job's output: its key must be under outputs/<its account>/<its id>/" },
      ]);
    const job =
      (await repeatedReport(services, id, outcome, "completed", (j) => j.outputKey === report.outputKey)) ??
      movedJob(outcome);
    if (job.webhookPendingSince) notifyAfterResponse(services, job, waitUntilOf(c));
    return c.json({ status: job.status });
  })
  .post("/jobs/:id/fail", jsonBody(failBody), async (c) => {
    const services = c.get("services");
    const { errorMessage, attempt, final, duration } = c.req.valid("json");
    const id = c.req.param("id");
    const outcome = final
      ? await jobStates.fail(services.db, id, { errorMessage, attempt, duration: duration ?? null })
      : await jobStates.retry(services.db, id);
    const repeated = final
      ? await repeatedReport(services, id, outcome, "failed", (j) => j.errorMessage === errorMessage)
      : // A job the sweep requeued meanwhile has a new message and one attempt more: not this report's doing.
        await repeatedReport(services, id, outcome, "queued", (j) => j.retryCount === attempt);
    const job = repeated ?? movedJob(outcome);
    if (job.webhookPendingSince) notifyAfterResponse(services, job, waitUntilOf(c));
    return c.json({ status: job.status });
  })
  .post("/sweep", async (c) => c.json(await sweep(c.get("services"))));
