import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { validateEdl } from "../../../domain/edl/validate";
import { iso } from "../../../domain/time";
import type { AppEnv } from "../../context";
import { createQueuedJob } from "../../lib/create-job";
import { jsonBody } from "../../lib/json-body";
import { requireCaller } from "../../middleware/auth";
import { idempotent } from "../../middleware/idempotency";
import { BODY_LIMITS, bodyLimitError } from "../../middleware/body-limit";
import { authenticated, jsonRequest, jsonResponse } from "../../openapi/common";
import {
  authenticatedErrors,
  EdlValidationFailedError,
  examples,
  InvalidJsonError,
  quotaErrors,
  ValidationError,
} from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { createdHeaders, idempotencyKeyHeader } from "../jobs/schema";
import { createdEdlExamples, createEdlExamples, createEdlRefusals } from "./examples";
import { presentCreatedEdl } from "./present";
import { CreatedEdlJob, createEdlBody, edlValidationFailed } from "./schema";

const createEdlRoute = createRoute({
  method: "post",
  path: "/edl",
  tags: ["Timelines (EDL)"],
  operationId: "createEdlJob",
  summary: "Create a timeline job",
  description:
    "Validates the timeline, then queues it as one job (preset `edl_custom`) for one quota unit however many clips it has. An invalid timeline takes no unit.",
  security: authenticated,
  middleware: [requireCaller, jsonBody(createEdlBody), idempotent] as const,
  request: { headers: idempotencyKeyHeader, body: jsonRequest(createEdlBody, createEdlExamples) },
  responses: {
    201: { ...jsonResponse("Created, status queued.", CreatedEdlJob, createdEdlExamples), headers: createdHeaders },
    400: jsonResponse(
      "An invalid timeline, malformed JSON, or no `edl` field.",
      z.union([EdlValidationFailedError, InvalidJsonError, ValidationError]),
      { ...createEdlRefusals, invalidJson: examples.invalidJson },
    ),
    ...quotaErrors,
    ...bodyLimitError(BODY_LIMITS.timeline),
    ...authenticatedErrors,
  },
});

/** POST /edl: one quota unit however many clips; an invalid timeline takes none. */
export function registerCreateEdl(app: OpenAPIHono<AppEnv>) {
  operation(app, createEdlRoute, async (c) => {
    const caller = c.get("caller");
    const body = c.req.valid("json");
    const result = validateEdl(body.edl, caller.plan);
    if (!result.valid || !result.edl) throw edlValidationFailed(result.errors);
    const firstClip = result.edl.timeline.tracks.flatMap((t) => (t.type === "video" ? t.clips : []))[0];
    const job = await createQueuedJob(
      c.get("services"),
      { caller },
      {
        preset: null,
        // The job row's inputUrl is the first video clip's source; the whole timeline is in `edl`.
        inputUrl: firstClip.src,
        clientMetadata: body.metadata,
        // The document as sent: the encoder validates it again with the same pure validator.
        edl: body.edl,
      },
    );
    return c.json(
      presentCreatedEdl(
        { id: job.id, createdAt: iso(job.createdAt), remainingJobs: job.remainingJobs },
        result,
        caller,
      ),
      201,
    );
  });
}
