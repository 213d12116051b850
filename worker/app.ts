import { Hono } from "hono";
import type { AppEnv } from "./context";
import { renderError } from "./errors";
import { BODY_LIMITS, limitBody } from "./middleware/body-limit";
import { init } from "./middleware/init";
import { registerCreateEdl } from "./routes/edl/create";
import { registerValidateEdl } from "./routes/edl/validate";
import { registerCancelJob } from "./routes/jobs/cancel";
import { registerCreateJob } from "./routes/jobs/create";
import { registerDownloadUrl } from "./routes/jobs/download-url";
import { registerGetJob } from "./routes/jobs/get";
import { registerListJobs } from "./routes/jobs/list";
import { internalJobs } from "./routes/internal/jobs";
import { webhookDeliveries } from "./routes/internal/webhook-deliveries";
import { registerListPresets } from "./routes/presets/list";

function publicApi() {
  const api = new Hono<AppEnv>();
  registerCreateJob(api);
  registerListJobs(api);
  registerGetJob(api);
  registerCancelJob(api);
  registerDownloadUrl(api);
  registerListPresets(api);
  registerCreateEdl(api);
  registerValidateEdl(api);
  return api;
}

export function createApp() {
  const app = new Hono<AppEnv>();
  app.onError(renderError);
  app.notFound((c) => c.json({ error: "Not found", message: `No route for ${c.req.method} ${c.req.path}` }, 404));

  // No bindings touched: liveness, and the baseline route for bench/api.ts.
  app.get("/healthz", (c) => c.json({ ok: true }));

  // Size first, before any work: the routes that read a body, and only them.
  app.use("/api/v1/jobs", limitBody(BODY_LIMITS.job));
  app.use("/api/v1/edl", limitBody(BODY_LIMITS.timeline));
  app.use("/internal/*", limitBody(BODY_LIMITS.internal));
  app.use("/api/*", init);
  app.use("/internal/*", init);
  app.route("/api/v1", publicApi());
  // Before internalJobs: QStash signs these, not the encoder.
  app.route("/internal/webhook-deliveries", webhookDeliveries);
  app.route("/internal", internalJobs);
  return app;
}
