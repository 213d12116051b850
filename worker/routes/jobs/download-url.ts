import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { iso } from "../../../domain/time";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { outputState } from "../../lib/output-links";
import { requireCallerWithOwnJob } from "../../middleware/own-job";
import { authenticated, jsonResponse } from "../../openapi/common";
import { authenticatedErrors, BareMessageError } from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { downloadGoneExamples, downloadLinkExamples, downloadNotFoundExamples, downloadRefusals } from "./examples";
import { DownloadLink, jobIdParam } from "./schema";

const downloadUrlRoute = createRoute({
  method: "get",
  path: "/jobs/{id}/download-url",
  tags: ["Jobs"],
  operationId: "getDownloadUrl",
  summary: "Sign a fresh download link",
  description:
    "Signs a new link to a completed job's output (free plan: 4 hours; other plans: 7 days). The link needs no Authorization header. Errors here are a bare `{message}` with no `error` field.",
  security: authenticated,
  middleware: [requireCallerWithOwnJob] as const,
  request: { params: jobIdParam },
  responses: {
    200: jsonResponse("A signed link.", DownloadLink, downloadLinkExamples),
    400: jsonResponse("The job is not completed, or its output has been removed.", BareMessageError, downloadRefusals),
    404: jsonResponse("No such job for this account.", BareMessageError, downloadNotFoundExamples),
    410: jsonResponse(
      "The output was stored under an older layout and can no longer be signed; run the job again.",
      BareMessageError,
      downloadGoneExamples,
    ),
    ...authenticatedErrors,
  },
});

/** Errors here are bare `{message}` bodies (docs/contract.md §5.5). */
export function registerDownloadUrl(app: OpenAPIHono<AppEnv>) {
  operation(app, downloadUrlRoute, async (c) => {
    const caller = c.get("caller");
    const services = c.get("services");
    const job = c.get("ownJob");
    if (!job) throw ApiError.bare(404, "Job not found");

    const output = await outputState(services, job, caller.plan, { recheck: true });
    switch (output.kind) {
      case "not-ready":
        throw ApiError.bare(400, `Job is not completed (status '${job.status}'); there is no output to download.`);
      case "missing":
        throw ApiError.bare(400, "Job has no output: it has been removed from storage.");
      case "legacy":
        throw ApiError.bare(
          410,
          "This job's output was stored under an older storage layout and can no longer be signed. Run the job again.",
        );
      case "signed":
        return c.json(
          {
            downloadUrl: output.link.url,
            expiresAt: iso(output.link.expiresAt),
            message: "Download link signed; it needs no Authorization header and works until expiresAt.",
          },
          200,
        );
    }
  });
}
