import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { presetCatalogueView } from "../../../domain/presets/view";
import type { AppEnv } from "../../context";
import { optionalCaller } from "../../middleware/auth";
import { jsonResponse, optionallyAuthenticated } from "../../openapi/common";
import { authenticatedErrors } from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { PRESET_LINKS, PresetCatalogue, presetCatalogueExamples } from "./schema";

const listPresetsRoute = createRoute({
  method: "get",
  path: "/presets",
  tags: ["Presets"],
  operationId: "listPresets",
  summary: "List presets",
  description:
    "The 23-preset catalogue as the caller's plan sees it. The key is optional: without one the free plan's view is shown; a key that is sent must be valid.",
  security: optionallyAuthenticated,
  middleware: [optionalCaller] as const,
  responses: {
    200: jsonResponse("The catalogue.", PresetCatalogue, presetCatalogueExamples),
    ...authenticatedErrors,
  },
});

export function registerListPresets(app: OpenAPIHono<AppEnv>) {
  operation(app, listPresetsRoute, (c) => {
    const plan = c.get("optionalCaller")?.plan ?? "free";
    return c.json({ ...presetCatalogueView(plan), links: PRESET_LINKS }, 200);
  });
}
