import type { Hono } from "hono";
import { presetCatalogueView } from "../../../domain/presets/view";
import type { AppEnv } from "../../context";
import { optionalCaller } from "../../middleware/auth";

export function registerListPresets(app: Hono<AppEnv>) {
  app.get("/presets", optionalCaller, (c) => {
    const plan = c.get("optionalCaller")?.plan ?? "free";
    return c.json({
      ...presetCatalogueView(plan),
      links: { self: "/api/v1/presets", jobs: "/api/v1/jobs" },
    });
  });
}
