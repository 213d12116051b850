import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { iso } from "../../../domain/time";
import type { AppEnv } from "../../context";
import { ApiError, logJobError } from "../../errors";
import * as jobStates from "../../lib/job-states";
import { notCancellable } from "../../lib/refusals";
import { settleEndedJob } from "../../lib/split-jobs";
import { waitUntilOf } from "../../lib/wait-until";
import { requireCaller } from "../../middleware/auth";
import { authenticated, jsonResponse } from "../../openapi/common";
import { authenticatedErrors, examples, InvalidOperationError, NotFoundError } from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { cancelExamples, notCancellableExamples } from "./examples";
import { CancelledJob, jobIdParam } from "./schema";

const cancelJobRoute = createRoute({
  method: "delete",
  path: "/jobs/{id}",
  tags: ["Jobs"],
  operationId: "cancelJob",
  summary: "Cancel a job",
  description:
    "Cancels a queued or processing job: a queued job never starts, a processing one stops shortly. The quota unit is not returned.",
  security: authenticated,
  middleware: [requireCaller] as const,
  request: { params: jobIdParam },
  responses: {
    200: jsonResponse("Cancelled.", CancelledJob, cancelExamples),
    400: jsonResponse("The job is not queued or processing.", InvalidOperationError, notCancellableExamples),
    404: jsonResponse("No such job for this account.", NotFoundError, { unknown: examples.notFound }),
    ...authenticatedErrors,
  },
});

export function registerCancelJob(app: OpenAPIHono<AppEnv>) {
  operation(app, cancelJobRoute, async (c) => {
    const caller = c.get("caller");
    const services = c.get("services");
    const { db, queue } = services;
    // Marked cancelled first, conditionally, so a worker finishing at the same moment cannot
    // be overwritten and a job is never both cancelled and completed (docs/contract.md §4.3, rule 2).
    // The status it had comes from the same statement (the row locked), so a job the encoder
    // claimed a moment ago gets the processing message (docs/contract.md §4.3, rule 4).
    const now = new Date();
    const outcome = await jobStates.cancel(db, { id: c.req.param("id"), accountId: caller.accountId }, now);
    if (!outcome.moved) throw outcome.found ? notCancellable(outcome.found) : ApiError.notFound();
    const { job, previous } = outcome;
    if (job.messageId) {
      // The cancel stands either way: a message still delivered finds the job cancelled, and its claim is refused.
      await queue
        .deleteMessage(job.messageId)
        .catch((err) =>
          logJobError(
            "the cancelled job's message could not be deleted; a delivery of it is refused at its claim",
            job.id,
            err,
          ),
        );
    }
    // A split job's parts' messages and scratch (docs/scaling.md): a running part learns of the cancel at its next beat.
    if (job.scratchPendingSince) waitUntilOf(c)(settleEndedJob(services, job));
    return c.json(
      {
        id: job.id,
        status: "cancelled" as const,
        message: previous === "processing" ? "Job is processing and will stop shortly" : "Job cancelled successfully",
        cancelledAt: iso(now),
      },
      200,
    );
  });
}
