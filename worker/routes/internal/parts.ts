import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { jobs } from "../../../drizzle/schema";
import { MAX_PARTS, partOutputKey, taskIndices } from "../../../domain/split";
import { isUuid } from "../../../domain/ids";
import type { AppEnv } from "../../context";
import { ApiError, logJobError } from "../../errors";
import { claimJob } from "../../lib/encoder-moves";
import * as jobStates from "../../lib/job-states";
import { jsonBody } from "../../lib/json-body";
import * as partStates from "../../lib/part-states";
import { deleteScratch, settleEndedJob } from "../../lib/split-jobs";
import { waitUntilOf } from "../../lib/wait-until";
import type { Services } from "../../services";
import { claimBody, partCompleteBody, partFailBody, partHeartbeatBody, splitBody } from "./schema";
import { verifyEncoder } from "./verify";

/** Part messages published at once: a split's fan-out is up to MAX_PARTS publishes. */
const PUBLISHES_AT_ONCE = 8;

/** 404 for an unknown job or part, 409 with what was found otherwise: the encoder stops (or, `processing`, retries later). */
function refuse(refusal: partStates.Refusal): never {
  if (!refusal.found) throw ApiError.notFound();
  const status = partStates.refusalStatus(refusal.found);
  throw ApiError.conflict(`Job is ${status}`, { status });
}

/**
 * Publishes the parts' messages and records them. A publish that fails leaves its part queued
 * without a message, which the sweep dispatches (lib/sweep.ts); the deduplication id keeps a
 * part published twice one message.
 */
async function dispatchParts(
  services: Services,
  jobId: string,
  parts: partStates.PartDispatch[],
  options: { delaySeconds?: number } = {},
) {
  const published: (partStates.PartDispatch & { messageId: string })[] = [];
  for (let from = 0; from < parts.length; from += PUBLISHES_AT_ONCE) {
    const batch = parts.slice(from, from + PUBLISHES_AT_ONCE);
    const results = await Promise.allSettled(
      batch.map((p) => services.queue.publishPart(jobId, p.index, p.dispatch, options)),
    );
    results.forEach((result, i) => {
      if (result.status === "fulfilled") published.push({ ...batch[i], messageId: result.value });
      else logJobError(`part ${batch[i].index} could not be dispatched; the sweep dispatches it`, jobId, result.reason);
    });
  }
  await partStates.recordPartMessages(services.db, jobId, published);
}

const endedStatus = (found: partStates.Found | null) =>
  found === "cancelled" || found === "failed" || found === "completed";

/** What a job's encoder stored after the job ended (and its scratch was deleted), deleted after the answer. */
function deleteLateScratch(services: Services, jobId: string, wait: (work: Promise<unknown>) => void) {
  const late = async () => {
    const [job] = await services.db
      .select({ id: jobs.id, accountId: jobs.accountId, status: jobs.status })
      .from(jobs)
      .where(eq(jobs.id, jobId));
    if (job) await deleteScratch(services, job);
  };
  wait(late().catch((err) => logJobError("a late scratch could not be deleted", jobId, err)));
}

/** The job a part failed: its webhook, its other parts' messages and its scratch, after the answer. */
function settleAfterResponse(services: Services, job: partStates.FailedJob, wait: (work: Promise<unknown>) => void) {
  wait(settleEndedJob(services, job));
}

/** Postgres refuses a malformed uuid with an error: such an id names no job. */
const knownId = createMiddleware<AppEnv>(async (c, next) => {
  if (!isUuid(c.req.param("id") ?? "")) throw ApiError.notFound();
  await next();
});

/**
 * A split job's routes for the encoder (docs/scaling.md): the split that hands the parts over,
 * each part's claim, heartbeat and reports, and the join's claim. Signed as every /internal call
 * is; mounted before internalJobs, so these paths are checked here, once.
 */
export const internalParts = new Hono<AppEnv>()
  .use("/jobs/:id/split", verifyEncoder, knownId)
  .use("/jobs/:id/parts/*", verifyEncoder, knownId)
  .use("/jobs/:id/join/*", verifyEncoder, knownId)
  .use("/jobs/:id/parts/:index/*", async (c, next) => {
    const index = c.req.param("index");
    // Up to MAX_PARTS: the audio's task follows the last part.
    if (!/^\d{1,3}$/.test(index) || Number(index) > MAX_PARTS) throw ApiError.notFound("Part not found");
    await next();
  })
  .post("/jobs/:id/split", jsonBody(splitBody), async (c) => {
    const services = c.get("services");
    const id = c.req.param("id");
    const { claim, plan, stored = taskIndices(plan), keep } = c.req.valid("json");
    const outcome = await partStates.recordSplit(services.db, id, claim, plan, stored);
    if (!outcome.moved) {
      // The job ended while its pieces were cut and stored: they are nobody's now.
      if (endedStatus(outcome.found)) deleteLateScratch(services, id, waitUntilOf(c));
      refuse(outcome);
    }
    // Also on a later call, and on one sent again: a part whose publish failed before is published now.
    // The kept tasks wait for their encoder's claims instead; the sweep publishes one should its
    // claim never come (docs/scaling.md#the-audio).
    const undispatched = await partStates.undispatchedParts(services.db, id);
    const kept = undispatched.filter((p) => keep?.includes(p.index));
    await dispatchParts(
      services,
      id,
      undispatched.filter((p) => !kept.includes(p)),
    );
    return c.json(kept.length > 0 ? { parts: outcome.parts, kept } : { parts: outcome.parts });
  })
  .post("/jobs/:id/parts/:index/claim", jsonBody(claimBody), async (c) => {
    const services = c.get("services");
    const id = c.req.param("id");
    const index = Number(c.req.param("index"));
    const outcome = await partStates.claimPart(services.db, id, index, c.req.valid("json").dispatch);
    if ("failed" in outcome) {
      settleAfterResponse(services, outcome.failed, waitUntilOf(c));
      refuse({ moved: false, found: "failed" });
    }
    if (!outcome.moved) refuse(outcome);
    const { claim, attempt, accountId, preset, inputUrl, plan, part } = outcome;
    return c.json({ claim, attempt, accountId, preset, inputUrl, plan, part });
  })
  .post("/jobs/:id/parts/:index/heartbeat", jsonBody(partHeartbeatBody), async (c) => {
    const { claim, progress } = c.req.valid("json");
    const id = c.req.param("id");
    const outcome = await partStates.beatPart(c.get("services").db, id, Number(c.req.param("index")), claim, progress);
    if (!outcome.moved) refuse(outcome);
    return c.json({ status: "processing" });
  })
  .post("/jobs/:id/parts/:index/complete", jsonBody(partCompleteBody), async (c) => {
    const services = c.get("services");
    const id = c.req.param("id");
    const index = Number(c.req.param("index"));
    const { claim, outputKey } = c.req.valid("json");
    if (outputKey !== partOutputKey(id, index))
      throw ApiError.validation([{ field: "outputKey", message: "Not this part's output key" }]);
    const outcome = await partStates.completePart(services.db, id, index, claim, outputKey);
    if (!outcome.moved) {
      // The job ended while this part ran: its output may have landed after the scratch was deleted.
      if (endedStatus(outcome.found)) deleteLateScratch(services, id, waitUntilOf(c));
      refuse(outcome);
    }
    if (outcome.joinDispatch !== null) {
      // A publish that fails leaves the job queued without a message: the sweep dispatches its join.
      try {
        await jobStates.recordMessage(services.db, id, await services.queue.publishJoin(id, outcome.joinDispatch));
      } catch (err) {
        logJobError("the join could not be dispatched; the sweep dispatches it", id, err);
      }
    }
    return c.json({ status: "completed" });
  })
  .post("/jobs/:id/parts/:index/fail", jsonBody(partFailBody), async (c) => {
    const services = c.get("services");
    const id = c.req.param("id");
    const { claim, ...failure } = c.req.valid("json");
    const outcome = await partStates.failPart(services.db, id, Number(c.req.param("index")), claim, failure);
    if (!outcome.moved) refuse(outcome);
    if ("requeued" in outcome) {
      if (outcome.requeued)
        await dispatchParts(services, id, [outcome.requeued], { delaySeconds: services.env.JOB_RETRY_DELAY_SECONDS });
      return c.json({ status: "queued" });
    }
    if (outcome.failed) settleAfterResponse(services, outcome.failed, waitUntilOf(c));
    return c.json({ status: "failed" });
  })
  .post("/jobs/:id/join/claim", jsonBody(claimBody), async (c) => {
    const services = c.get("services");
    const id = c.req.param("id");
    const { job, split } = await claimJob(services, id, c.req.valid("json").dispatch, "join", waitUntilOf(c));
    if (!split) throw ApiError.notFound();
    return c.json({ job, plan: split, parts: await partStates.partOutputs(services.db, id) });
  });
