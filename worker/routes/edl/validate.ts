import type { Hono } from "hono";
import { canProcess, validateEdl } from "../../../domain/edl/validate";
import type { AppEnv } from "../../context";
import { jsonBody } from "../../lib/json-body";
import { requireCaller } from "../../middleware/auth";
import { validateEdlBody } from "./schema";

/** PUT /edl: 200 whether or not the timeline is valid; never touches the quota. */
export function registerValidateEdl(app: Hono<AppEnv>) {
  app.put("/edl", requireCaller, jsonBody(validateEdlBody), (c) => {
    const caller = c.get("caller");
    const result = validateEdl(c.req.valid("json").edl, caller.plan);
    return c.json({
      valid: result.valid,
      ...(result.errors.length ? { errors: result.errors } : {}),
      ...(result.warnings.length ? { warnings: result.warnings } : {}),
      stats: result.stats,
      estimate: result.estimate,
      plan: { current: caller.plan, canProcess: canProcess(result) },
    });
  });
}
