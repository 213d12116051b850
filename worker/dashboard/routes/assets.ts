import { Hono } from "hono";
// dash.js as the package exports it to an import: its ES module build, which the page imports.
import dashModule from "dashjs";
import hlsScript from "hls.js/dist/hls.light.min.js";
import script from "../assets/dashboard.js";
import stylesheet from "../assets/dashboard.css";

/** A Map, not an object: a name from the URL such as `constructor` must not find Object.prototype's members. */
const ASSETS = new Map<string, { body: string; type: string }>([
  ["dashboard.css", { body: stylesheet, type: "text/css; charset=utf-8" }],
  ["dashboard.js", { body: script, type: "text/javascript; charset=utf-8" }],
  ["hls.light.min.js", { body: hlsScript, type: "text/javascript; charset=utf-8" }],
  ["dash.all.min.js", { body: dashModule, type: "text/javascript; charset=utf-8" }],
]);

/** The stylesheet, the page script, hls.js and dash.js, bundled into the Worker (the dashboard loads nothing from elsewhere). */
export const assetRoutes = new Hono().get("/assets/:name", (c) => {
  const asset = ASSETS.get(c.req.param("name"));
  if (!asset) return c.text("Not found", 404);
  return c.body(asset.body, 200, { "Content-Type": asset.type, "Cache-Control": "public, max-age=3600" });
});
