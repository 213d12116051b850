import type { Hono } from "hono";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { findOwnJob } from "../../lib/find-job";
import { outputState } from "../../lib/output-links";
import { requireCaller } from "../../middleware/auth";
import { presentJob } from "./present";

export function registerGetJob(app: Hono<AppEnv>) {
  app.get("/jobs/:id", requireCaller, async (c) => {
    const caller = c.get("caller");
    const { db, storage } = c.get("services");
    const job = await findOwnJob(db, caller.accountId, c.req.param("id"));
    if (!job) throw ApiError.notFound();
    return c.json(presentJob(job, await outputState(storage, job, caller.plan)));
  });
}
