import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../context";
import { ERROR_KINDS } from "../../errors";
import { completionRefusal, uploadNotFound } from "../../lib/refusals";
import { completeUpload, findOwnUpload } from "../../lib/uploads";
import { requireCaller } from "../../middleware/auth";
import { authenticated, jsonResponse } from "../../openapi/common";
import { authenticatedErrors, NotFoundError } from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { completedUploadExamples, completionRefusals, uploadNotFoundExamples } from "./examples";
import { presentUpload } from "./present";
import { Upload, uploadIdParam } from "./schema";

const CompletionRefusedError = z
  .object({ error: z.literal(ERROR_KINDS.conflict), message: z.string() })
  .openapi("UploadCompletionRefusedError", {
    description:
      "A single upload (it completes itself), an upload past expiresAt, or parts missing: the message names their numbers.",
  });

const completeUploadRoute = createRoute({
  method: "post",
  path: "/uploads/{id}/complete",
  tags: ["Uploads"],
  operationId: "completeUpload",
  summary: "Complete a multipart upload",
  description:
    "Assembles a multipart upload once every part is in: the service lists the parts storage holds itself, so nothing is sent. Repeating a completion answers the same.",
  security: authenticated,
  middleware: [requireCaller] as const,
  request: { params: uploadIdParam },
  responses: {
    200: jsonResponse("Completed.", Upload, completedUploadExamples),
    404: jsonResponse("No such upload for this account.", NotFoundError, uploadNotFoundExamples),
    409: jsonResponse("The upload cannot be completed.", CompletionRefusedError, completionRefusals),
    ...authenticatedErrors,
  },
});

export function registerCompleteUpload(app: OpenAPIHono<AppEnv>) {
  operation(app, completeUploadRoute, async (c) => {
    const services = c.get("services");
    const upload = await findOwnUpload(services.db, c.get("caller").accountId, c.req.param("id"));
    if (!upload) throw uploadNotFound();
    const completion = await completeUpload(services, upload);
    if (completion.kind !== "completed") throw completionRefusal(completion);
    return c.json(presentUpload(completion.view), 200);
  });
}
