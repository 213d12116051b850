import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { eq, sql } from "drizzle-orm";
import { jobs } from "../../../drizzle/schema";
import { iso } from "../../../domain/time";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { findOwnJob } from "../../lib/find-job";
import { requireCaller } from "../../middleware/auth";
import { authenticated, jsonResponse } from "../../openapi/common";
import { authenticatedErrors, examples, InvalidOperationError, type InvalidOperationBody, NotFoundError } from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { cancelExamples, notCancellableExamples } from "./examples";
import { CancelledJob, jobIdParam } from "./schema";

export const cancelJobRoute = createRoute({
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
    const { db, queue } = c.get("services");
    const job = await findOwnJob(db, caller.accountId, c.req.param("id"));
    if (!job) throw ApiError.notFound();

    // Marked cancelled first, conditionally, so a worker finishing at the same moment cannot
    // be overwritten and a job is never both cancelled and completed (spec, States rule 2).
    // The status it had comes from the same statement (the row locked), so a job the encoder
    // claimed a moment ago gets the processing message (spec, States rule 4).
    const now = new Date();
    const { rows } = await db.execute<{ previous: string }>(sql`
      update ${jobs} set status = 'cancelled', cancelled_at = ${now.toISOString()}
      from (select id, status from ${jobs} where id = ${job.id} for update) as before
      where ${jobs.id} = before.id and before.status in ('queued', 'processing')
      returning before.status as previous`);
    const previous = rows[0]?.previous;
    if (!previous) {
      const [current] = await db.select({ status: jobs.status }).from(jobs).where(eq(jobs.id, job.id));
      throw new ApiError(400, {
        error: "Invalid operation",
        message: `Job cannot be cancelled: its status is '${current?.status ?? job.status}'. Only queued or processing jobs can be cancelled.`,
      } satisfies InvalidOperationBody);
    }
    if (job.messageId) {
      // The message may already be delivered or gone; the cancelled status is what the encoder obeys.
      await queue.deleteMessage(job.messageId).catch(() => undefined);
    }
    return c.json(
      {
        id: job.id,
        status: "cancelled" as const,
        message: previous === "processing" ? "Job is processing and will stop shortly" : "Job cancelled successfully",
        cancelledAt: iso(now)!,
      },
      200,
    );
  });
}
