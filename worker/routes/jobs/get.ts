import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { outputState } from "../../lib/output-links";
import { playbackLink } from "../../lib/playback-links";
import { requireCallerWithOwnJob } from "../../middleware/own-job";
import { authenticated, jsonResponse } from "../../openapi/common";
import { authenticatedErrors, examples, NotFoundError } from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { jobReadExamples } from "./examples";
import { presentJob } from "./present";
import { Job, jobIdParam } from "./schema";

const getJobRoute = createRoute({
  method: "get",
  path: "/jobs/{id}",
  tags: ["Jobs"],
  operationId: "getJob",
  summary: "Read a job",
  description:
    "The job's status, its signed output link once completed (signed afresh on every read), its progress, and for a streaming preset its playback link as soon as the stream plays (while it is still processing). Poll every 10–15 seconds.",
  security: authenticated,
  middleware: [requireCallerWithOwnJob] as const,
  request: { params: jobIdParam },
  responses: {
    200: jsonResponse("The job.", Job, jobReadExamples),
    404: jsonResponse("No such job for this account.", NotFoundError, { unknown: examples.notFound }),
    ...authenticatedErrors,
  },
});

export function registerGetJob(app: OpenAPIHono<AppEnv>) {
  operation(app, getJobRoute, async (c) => {
    const caller = c.get("caller");
    const services = c.get("services");
    const job = c.get("ownJob");
    if (!job) throw ApiError.notFound();
    const [output, playback] = await Promise.all([
      outputState(services, job, caller.plan),
      playbackLink(services.env, job, caller.plan),
    ]);
    return c.json(presentJob(job, output, playback), 200);
  });
}
