import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { MAX_UPLOAD_BYTES } from "../../../domain/plans";
import type { AppEnv } from "../../context";
import { jsonBody } from "../../lib/json-body";
import { sizeOverPlan } from "../../lib/refusals";
import { createUpload } from "../../lib/uploads";
import { requireCaller } from "../../middleware/auth";
import { BODY_LIMITS, bodyLimitError } from "../../middleware/body-limit";
import { authenticated, jsonRequest, jsonResponse } from "../../openapi/common";
import {
  authenticatedErrors,
  examples,
  InvalidJsonError,
  PayloadTooLargeError,
  ValidationError,
} from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { createdUploadExamples, createUploadExamples, createUploadRefusals, sizeOverPlanExample } from "./examples";
import { presentUpload } from "./present";
import { createUploadBody, Upload } from "./schema";

const bodyTooLarge = bodyLimitError(BODY_LIMITS.upload)[413];

const createUploadRoute = createRoute({
  method: "post",
  path: "/uploads",
  tags: ["Uploads"],
  operationId: "createUpload",
  summary: "Upload a file directly",
  description:
    "Answers presigned URLs to put a file into the service's storage: one PUT up to 100 MiB (or when no size is given), otherwise a multipart upload with a URL per part, finished with POST /uploads/{id}/complete. The upload's `inputUrl` is then a job's source like any URL. The URLs work for 24 hours; no quota is taken.",
  security: authenticated,
  middleware: [requireCaller, jsonBody(createUploadBody)] as const,
  request: { body: jsonRequest(createUploadBody, createUploadExamples) },
  responses: {
    201: jsonResponse("Created, status pending.", Upload, createdUploadExamples),
    400: jsonResponse(
      "Malformed JSON, or a body that does not match the schema.",
      z.union([InvalidJsonError, ValidationError]),
      { ...createUploadRefusals, invalidJson: examples.invalidJson },
    ),
    413: jsonResponse(
      "The declared size is over the plan's maximum (Starter 1 GiB, other plans 5 GiB), or the body is over its limit.",
      PayloadTooLargeError,
      { sizeOverPlan: sizeOverPlanExample, ...bodyTooLarge.content["application/json"].examples },
    ),
    ...authenticatedErrors,
  },
});

export function registerCreateUpload(app: OpenAPIHono<AppEnv>) {
  operation(app, createUploadRoute, async (c) => {
    const body = c.req.valid("json");
    const caller = c.get("caller");
    if (body.size !== undefined && body.size > MAX_UPLOAD_BYTES[caller.plan]) throw sizeOverPlan(caller.plan);
    const created = await createUpload(c.get("services"), caller.accountId, {
      filename: body.filename ?? null,
      contentType: body.contentType ?? null,
      size: body.size ?? null,
    });
    return c.json(presentUpload(created), 201);
  });
}
