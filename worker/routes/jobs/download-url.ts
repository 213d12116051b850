import type { Hono } from "hono";
import { iso } from "../../../domain/time";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { findOwnJob } from "../../lib/find-job";
import { outputState } from "../../lib/output-links";
import { requireCaller } from "../../middleware/auth";

/** Errors here are bare `{message}` bodies (spec, GET /jobs/{id}/download-url). */
export function registerDownloadUrl(app: Hono<AppEnv>) {
  app.get("/jobs/:id/download-url", requireCaller, async (c) => {
    const caller = c.get("caller");
    const { db, storage } = c.get("services");
    const job = await findOwnJob(db, caller.accountId, c.req.param("id"));
    if (!job) throw ApiError.bare(404, "Job not found");

    const output = await outputState(storage, job, caller.plan);
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
        return c.json({
          downloadUrl: output.link.url,
          expiresAt: iso(output.link.expiresAt),
          message: "Download link signed; it needs no Authorization header and works until expiresAt.",
        });
    }
  });
}
