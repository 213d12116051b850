import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context";
import { uploadNotFound } from "../../lib/refusals";
import { findOwnUpload, readUpload } from "../../lib/uploads";
import { requireCaller } from "../../middleware/auth";
import { authenticated, jsonResponse } from "../../openapi/common";
import { authenticatedErrors, NotFoundError } from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { uploadNotFoundExamples, uploadReadExamples } from "./examples";
import { presentUpload } from "./present";
import { Upload, uploadIdParam } from "./schema";

const getUploadRoute = createRoute({
  method: "get",
  path: "/uploads/{id}",
  tags: ["Uploads"],
  operationId: "getUpload",
  summary: "Read an upload",
  description:
    "The upload's status and the URLs still of use: its upload URLs while pending, and a freshly signed `inputUrl` unless expired. A single upload reads `completed` once its object is in storage.",
  security: authenticated,
  middleware: [requireCaller] as const,
  request: { params: uploadIdParam },
  responses: {
    200: jsonResponse("The upload.", Upload, uploadReadExamples),
    404: jsonResponse("No such upload for this account.", NotFoundError, uploadNotFoundExamples),
    ...authenticatedErrors,
  },
});

export function registerGetUpload(app: OpenAPIHono<AppEnv>) {
  operation(app, getUploadRoute, async (c) => {
    const services = c.get("services");
    const upload = await findOwnUpload(services.db, c.get("caller").accountId, c.req.param("id"));
    if (!upload) throw uploadNotFound();
    return c.json(presentUpload(await readUpload(services, upload)), 200);
  });
}
