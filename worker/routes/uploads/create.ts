import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../context";
import { jsonBody } from "../../lib/json-body";
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
import {
  createdUploadExamples,
  createUploadExamples,
  createUploadRefusals,
  sizeOverPlanExample,
  uploadLimitExamples,
} from "./examples";
import { presentUpload } from "./present";
import { createUploadBody, storedTypeOf, Upload, UploadLimitError } from "./schema";

const bodyTooLarge = bodyLimitError(BODY_LIMITS.upload)[413];

const createUploadRoute = createRoute({
  method: "post",
  path: "/uploads",
  tags: ["Uploads"],
  operationId: "createUpload",
  summary: "Upload a file directly",
  description:
    "Answers presigned URLs to put a file into the service's storage: one PUT up to 100 MiB, otherwise a multipart upload with a URL per part, finished with POST /uploads/{id}/complete. The size is signed into every URL, and the single PUT's Content-Type too. The upload's `inputUrl` is then a job's source like any URL. The URLs work for 24 hours; the object is kept for the plan's retention, then deleted. No job quota is taken, but an account's pending uploads and the bytes its uploads hold have limits of their own (429).",
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
    429: jsonResponse(
      "The account's pending uploads are at the plan's cap, or this upload would take its uploads over the plan's storage.",
      UploadLimitError,
      uploadLimitExamples,
    ),
    ...authenticatedErrors,
  },
});

export function registerCreateUpload(app: OpenAPIHono<AppEnv>) {
  operation(app, createUploadRoute, async (c) => {
    const body = c.req.valid("json");
    const created = await createUpload(c.get("services"), c.get("caller"), {
      filename: body.filename ?? null,
      contentType: storedTypeOf(body),
      size: body.size,
    });
    return c.json(presentUpload(created), 201);
  });
}
