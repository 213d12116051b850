import { Hono } from "hono";
import type { AppEnv } from "./context";
import { dashboardApp } from "./dashboard/app";
import { ApiError, renderError } from "./errors";
import { BODY_LIMITS, limitBody } from "./middleware/body-limit";
import { PLAY_PATH } from "./lib/playback-links";
import { init } from "./middleware/init";
import { registerReference } from "./openapi/reference";
import { dispatchFailures } from "./routes/internal/dispatch-failures";
import { internalJobs } from "./routes/internal/jobs";
import { internalParts } from "./routes/internal/parts";
import { internalStream } from "./routes/internal/stream";
import { play } from "./routes/play";
import { webhookDeliveries } from "./routes/internal/webhook-deliveries";
import { publicApi } from "./routes/public-api";
import { QSTASH_ROUTES } from "./services/queue";

export function createApp() {
  const app = new Hono<AppEnv>();
  app.onError(renderError);
  app.notFound((c) => {
    throw ApiError.notFound(`No route for ${c.req.method} ${c.req.path}`);
  });

  // No bindings touched: liveness, and the baseline route for bench/api.ts.
  app.get("/healthz", (c) => c.json({ ok: true }));
  // Before the init middleware: the reference needs no binding.
  registerReference(app);

  // Size first, before any work: the routes that read a body, and only them.
  app.use("/api/v1/jobs", limitBody(BODY_LIMITS.job));
  app.use("/api/v1/edl", limitBody(BODY_LIMITS.timeline));
  app.use("/api/v1/uploads", limitBody(BODY_LIMITS.upload));
  app.use("/internal/*", limitBody(BODY_LIMITS.internal));
  app.use("/api/*", init);
  app.use("/internal/*", init);
  app.use(`${PLAY_PATH}/*`, init);
  app.route("/api/v1", publicApi());
  // Before internalJobs: QStash signs these, not the encoder.
  app.route(QSTASH_ROUTES.webhookDeliveries, webhookDeliveries);
  app.route(QSTASH_ROUTES.dispatchFailures, dispatchFailures);
  // Before internalJobs, whose middleware would check these paths' signatures a second time.
  app.route("/internal", internalParts);
  app.route("/internal", internalStream);
  app.route("/internal", internalJobs);
  app.route(PLAY_PATH, play);
  app.get("/", (c) => c.redirect("/dashboard"));
  app.route("/dashboard", dashboardApp());
  return app;
}
