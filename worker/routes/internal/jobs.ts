import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { accounts, type Job } from "../../../drizzle/schema";
import { isUuid } from "../../../domain/ids";
import { MAX_SOURCE_SECONDS } from "../../../domain/plans";
import type { AppEnv, Services } from "../../context";
import { ApiError } from "../../errors";
import * as jobStates from "../../lib/job-states";
import { jsonBody } from "../../lib/json-body";
import { sweepStaleJobs } from "../../lib/sweep";
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

/** The webhook goes out after the answer: the encoder's report is settled whatever the queue does. */
function notifyAfterResponse(services: Services, job: Job, wait: (work: Promise<unknown>) => void) {
  wait(notifyJobFinished(services, job).catch((err) => console.error("webhook publish failed", job.id, err)));
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
    const [account] = await services.db.select({ plan: accounts.plan }).from(accounts).where(eq(accounts.id, claimed.accountId));
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
    const job = movedJob(await jobStates.heartbeat(c.get("services").db, c.req.param("id"), c.req.valid("json").progress));
    return c.json({ status: job.status });
  })
  .post("/jobs/:id/complete", jsonBody(completeBody), async (c) => {
    const services = c.get("services");
    const done = movedJob(await jobStates.complete(services.db, c.req.param("id"), c.req.valid("json")));
    notifyAfterResponse(services, done, waitUntilOf(c));
    return c.json({ status: done.status });
  })
  .post("/jobs/:id/fail", jsonBody(failBody), async (c) => {
    const services = c.get("services");
    const { errorMessage, attempt, final, duration } = c.req.valid("json");
    const id = c.req.param("id");
    const job = movedJob(
      final
        ? await jobStates.fail(services.db, id, { errorMessage, attempt, duration: duration ?? null })
        : await jobStates.retry(services.db, id),
    );
    if (final) notifyAfterResponse(services, job, waitUntilOf(c));
    return c.json({ status: job.status });
  })
  .post("/sweep", async (c) => c.json(await sweepStaleJobs(c.get("services"))));
