import { Scalar } from "@scalar/hono-api-reference";
import type { Hono } from "hono";
import type { AppEnv } from "../context";
import { BEARER } from "./common";
import { openApiDocument } from "./document";

export const OPENAPI_PATH = "/api/v1/openapi.json";
const SCRIPT_PATH = "/docs/scalar.js";

/**
 * Scalar's hosted extras (its AI agent, which calls its own servers) are off: the reference
 * works offline. Spread in, since this wrapper's config type predates the option.
 */
const OFFLINE = { agent: { disabled: true } };

/**
 * The OpenAPI document and the interactive reference (Scalar). The reference's script is served
 * from here, not from a CDN, so /docs works offline and pins the version that was tested.
 * Neither touches a binding.
 */
export function registerReference(app: Hono<AppEnv>) {
  let document: ReturnType<typeof openApiDocument> | undefined;
  app.get(OPENAPI_PATH, (c) => {
    document ??= openApiDocument();
    return c.json(document);
  });
  app.get(SCRIPT_PATH, async (c) => {
    // A text module (wrangler.toml [[rules]]), imported on first use only.
    const { default: script } = await import("@scalar/api-reference/browser/standalone.js");
    return c.body(script, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=3600",
    });
  });
  app.get(
    "/docs",
    Scalar({
      ...OFFLINE,
      url: OPENAPI_PATH,
      cdn: SCRIPT_PATH,
      pageTitle: "Video encoding API reference",
      withDefaultFonts: false,
      telemetry: false,
      showDeveloperTools: "never",
      defaultOpenAllTags: true,
      authentication: { preferredSecurityScheme: BEARER },
    }),
  );
}
