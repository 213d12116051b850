import { PLAN_IDS, planIncludes } from "../../domain/plans";
import { EDL_PRESET_ID, type CatalogueEntry } from "../../domain/presets/catalogue";
import { quotaPeriod } from "../../domain/time";
import type { Caller } from "../context";
import { monthlyQuotas } from "../env";
import { ApiError, logJobError } from "../errors";
import type { Services } from "../services";
import * as jobStates from "./job-states";
import { presetNotAllowed, quotaUsedUp } from "./refusals";

export interface NewJobInput {
  /** A preset of the catalogue, which the caller's plan must include; or null for a timeline, checked against the plan before. */
  preset: CatalogueEntry | null;
  inputUrl: string;
  clientMetadata?: Record<string, unknown> | null;
  edl?: unknown;
}

export interface CreatedJob {
  id: string;
  createdAt: Date;
  remainingJobs: number;
  /** Who created it: the caller given, or the one the key was found to belong to. */
  caller: Caller;
}

/**
 * The creation flow both POST /jobs and POST /edl share: check the creator's plan, claim a
 * quota unit and insert the queued job in one statement, then hand the job to the queue. A key
 * that does not authenticate is refused here when the statement checked it (POST /jobs,
 * middleware/auth.ts's requireCreator). A job the queue refuses is marked failed and its unit
 * released (docs/contract.md §4.2, rows 1 and 2).
 */
export async function createQueuedJob(
  services: Services,
  creator: jobStates.Creator,
  input: NewJobInput,
): Promise<CreatedJob> {
  const { db, queue, env } = services;
  const createdAt = new Date();
  const limits = monthlyQuotas(env);
  const { preset } = input;
  const rules = {
    period: quotaPeriod(createdAt),
    limits,
    plans: preset ? PLAN_IDS.filter((plan) => planIncludes(plan, preset.requiredPlan)) : PLAN_IDS,
  };

  const creation = await jobStates.create(
    db,
    creator,
    {
      preset: preset?.id ?? EDL_PRESET_ID,
      inputUrl: input.inputUrl,
      clientMetadata: input.clientMetadata ?? null,
      edl: input.edl ?? null,
      createdAt,
    },
    rules,
  );
  if (creation.outcome === "unknownKey") throw ApiError.unauthorized();
  const { caller } = creation;
  if (creation.outcome === "presetNotAllowed") {
    if (preset) throw presetNotAllowed(preset, caller.plan);
    throw new Error("a timeline was refused for its plan, though its rules allow every plan");
  }
  if (creation.outcome === "quotaUsedUp") throw quotaUsedUp(caller.plan, limits[caller.plan], creation.used);

  const created = {
    id: creation.jobId,
    createdAt,
    remainingJobs: Math.max(0, limits[caller.plan] - creation.used),
    caller,
  };
  let messageId: string;
  try {
    messageId = await queue.publishJob(creation.jobId, 0);
  } catch (err) {
    let failed: Awaited<ReturnType<typeof jobStates.failUnqueued>>;
    try {
      failed = await jobStates.failUnqueued(
        db,
        creation.jobId,
        "The job could not be queued; its quota unit was returned. Please retry.",
      );
    } catch (failErr) {
      // Neither published nor failed, the job is still queued in the database, where the sweep
      // finds it and publishes it: it will run, and a 500 would have the client retry it into a
      // second job and a second unit.
      logJobError(
        "the job could not be queued, nor failed: it stays queued and the sweep publishes it",
        creation.jobId,
        failErr,
      );
      return created;
    }
    if (!failed.moved) {
      // The job left `queued` before it could be failed: the publish got through though its
      // answer was lost and an encoder claimed it, or the client cancelled it. It holds its unit
      // either way, so the creation stands; a 500 would be retried into a second job.
      logJobError(
        `the publish failed, but the job was already ${failed.found}: the creation stands`,
        creation.jobId,
        err,
      );
      return created;
    }
    throw err;
  }
  // The job is created and queued: a failure to note its message id must not turn that into a
  // 500, which the client would retry into a second job and a second unit. The sweep finds the
  // id missing and publishes the job again under its deduplication id (sweep.ts), which QStash
  // answers with the message it holds.
  await jobStates
    .recordMessage(db, creation.jobId, messageId)
    .catch((err) =>
      logJobError("the queued job's message id was not recorded; the sweep records it", creation.jobId, err),
    );
  return created;
}
