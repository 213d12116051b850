import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { validateEdl } from "../../../domain/edl/validate";
import type { AppEnv } from "../../context";
import { jsonBody } from "../../lib/json-body";
import { requireCaller } from "../../middleware/auth";
import { BODY_LIMITS, bodyLimitError } from "../../middleware/body-limit";
import { authenticated, jsonRequest, jsonResponse } from "../../openapi/common";
import { authenticatedErrors, examples, InvalidJsonError, ValidationError } from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { edlValidationExamples, validateEdlExamples } from "./examples";
import { presentEdlVerdict } from "./present";
import { EdlValidation, validateEdlBody } from "./schema";

const validateEdlRoute = createRoute({
  method: "put",
  path: "/edl",
  tags: ["Timelines (EDL)"],
  operationId: "validateEdl",
  summary: "Validate a timeline",
  description:
    "Checks a timeline against the rules and the caller's plan limits without creating a job or touching the quota. Answers 200 whether or not it is valid: read `valid`.",
  security: authenticated,
  middleware: [requireCaller, jsonBody(validateEdlBody)] as const,
  request: { body: jsonRequest(validateEdlBody, validateEdlExamples) },
  responses: {
    200: jsonResponse("The verdict, valid or not.", EdlValidation, edlValidationExamples),
    400: jsonResponse("Malformed JSON, or no `edl` field.", z.union([InvalidJsonError, ValidationError]), {
      invalidJson: examples.invalidJson,
    }),
    ...bodyLimitError(BODY_LIMITS.timeline),
    ...authenticatedErrors,
  },
});

/** PUT /edl: 200 whether or not the timeline is valid; never touches the quota. */
export function registerValidateEdl(app: OpenAPIHono<AppEnv>) {
  operation(app, validateEdlRoute, (c) => {
    const caller = c.get("caller");
    const result = validateEdl(c.req.valid("json").edl, caller.plan);
    return c.json(presentEdlVerdict(result, caller.plan), 200);
  });
}
