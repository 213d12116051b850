import { and, eq, inArray, sql } from "drizzle-orm";
import { Hono } from "hono";
import { accounts, jobs, type Job } from "../../../drizzle/schema";
import { isUuid } from "../../../domain/ids";
import { MAX_SOURCE_SECONDS } from "../../../domain/plans";
import type { AppEnv, Services } from "../../context";
import { ApiError } from "../../errors";
import { jsonBody } from "../../lib/json-body";
import { sweepStaleJobs } from "../../lib/sweep";
import { notifyWebhook } from "../../lib/webhooks";
import { claimBody, completeBody, failBody, heartbeatBody } from "./schema";
import { verifyEncoder } from "./verify";

async function loadJob(services: Services, id: string): Promise<Job> {
  const [job] = await services.db.select().from(jobs).where(eq(jobs.id, id)).limit(1);
  if (!job) throw ApiError.notFound();
  return job;
}

/** 409 tells the encoder to stop: the job left the state it was working in (usually: cancelled). */
function conflict(job: Pick<Job, "status">) {
  return new ApiError(409, { error: "Conflict", message: `Job is ${job.status}`, status: job.status });
}

async function finish(services: Services, job: Job, wait: (p: Promise<unknown>) => void) {
  const [account] = await services.db.select().from(accounts).where(eq(accounts.id, job.accountId));
  wait(notifyWebhook(services, account, job).catch((err) => console.error("webhook publish failed", job.id, err)));
}

function waitUntilOf(c: { executionCtx: { waitUntil(p: Promise<unknown>): void } }) {
  return (p: Promise<unknown>) => {
    try {
      c.executionCtx.waitUntil(p);
    } catch {
      void p;
    }
  };
}

/** The encoder's side of the state table; every transition is a conditional update. */
export const internalJobs = new Hono<AppEnv>()
  .use(verifyEncoder)
  // Postgres refuses a malformed uuid with an error: such an id names no job.
  .use("/jobs/:id/*", async (c, next) => {
    if (!isUuid(c.req.param("id"))) throw ApiError.notFound();
    await next();
  })
  .post("/jobs/:id/claim", jsonBody(claimBody), async (c) => {
    const services = c.get("services");
    const { attempt } = c.req.valid("json");
    const job = await loadJob(services, c.req.param("id"));
    const now = new Date();
    const [claimed] = await services.db
      .update(jobs)
      // Never lowers the count: a late redelivery of an earlier attempt must not undo a sweep's.
      .set({ status: "processing", startedAt: job.startedAt ?? now, lastCheckedAt: now, retryCount: sql`greatest(${jobs.retryCount}, ${attempt})`, progress: 0 })
      .where(and(eq(jobs.id, job.id), inArray(jobs.status, ["queued", "processing"])))
      .returning();
    if (!claimed) throw conflict(job);
    const [account] = await services.db.select().from(accounts).where(eq(accounts.id, job.accountId));
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
    const services = c.get("services");
    const { progress } = c.req.valid("json");
    const id = c.req.param("id");
    const [row] = await services.db
      .update(jobs)
      .set({ lastCheckedAt: new Date(), ...(progress === undefined ? {} : { progress }) })
      .where(and(eq(jobs.id, id), eq(jobs.status, "processing")))
      .returning({ status: jobs.status });
    if (!row) throw conflict(await loadJob(services, id));
    return c.json({ status: row.status });
  })
  .post("/jobs/:id/complete", jsonBody(completeBody), async (c) => {
    const services = c.get("services");
    const { outputKey, duration } = c.req.valid("json");
    const id = c.req.param("id");
    const now = new Date();
    const [done] = await services.db
      .update(jobs)
      .set({ status: "completed", outputKey, duration, completedAt: now, lastCheckedAt: now, progress: 1, storageLayout: "v2" })
      .where(and(eq(jobs.id, id), eq(jobs.status, "processing")))
      .returning();
    if (!done) throw conflict(await loadJob(services, id));
    await finish(services, done, waitUntilOf(c));
    return c.json({ status: done.status });
  })
  .post("/jobs/:id/fail", jsonBody(failBody), async (c) => {
    const services = c.get("services");
    const body = c.req.valid("json");
    const id = c.req.param("id");
    const now = new Date();
    const [row] = await services.db
      .update(jobs)
      .set(
        body.final
          ? { status: "failed", errorMessage: body.errorMessage, retryCount: body.attempt, lastCheckedAt: now, duration: body.duration ?? null }
          : { status: "queued", lastCheckedAt: now },
      )
      .where(and(eq(jobs.id, id), eq(jobs.status, "processing")))
      .returning();
    if (!row) throw conflict(await loadJob(services, id));
    if (body.final) await finish(services, row, waitUntilOf(c));
    return c.json({ status: row.status });
  })
  .post("/sweep", async (c) => c.json(await sweepStaleJobs(c.get("services"))));
