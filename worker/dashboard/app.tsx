import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { except } from "hono/combine";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { secureHeaders } from "hono/secure-headers";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError, renderError } from "../errors";
import { describeError } from "../services/error-log";
import { refusingUnreadableBodies } from "../middleware/body-limit";
import { init } from "../middleware/init";
import type { DashboardEnv } from "./context";
import { fromScript, loadSession, noStore, requireSignIn, sessionFormToken } from "./middleware";
import { MessagePage } from "./pages/errors";
import { renderPage } from "./pages/render";
import { accountRoutes } from "./routes/account";
import { assetRoutes } from "./routes/assets";
import { authRoutes } from "./routes/auth";
import { jobRoutes } from "./routes/jobs";
import { uploadRoutes } from "./routes/uploads";

/** Forms are a few fields; anything larger is not one of ours. */
const MAX_FORM_BYTES = 16 * 1024;

const FORBIDDEN =
  "This form could not be verified: it was not sent from this dashboard page, or its security token is missing or out of date. Reload the page and try again.";

function renderDashboardError(err: Error, c: Context<DashboardEnv>): Response | Promise<Response> {
  // A 403 is a form that failed hono/csrf's Origin check or the token check (middleware.ts).
  const forbidden = err instanceof HTTPException && err.status === 403;
  if (fromScript(c)) return renderError(forbidden ? new HTTPException(403, { message: FORBIDDEN }) : err, c);
  if (forbidden) {
    return renderPage(c, { title: "Not allowed", body: <MessagePage message={FORBIDDEN} /> }, 403);
  }
  // The service's own refusals (an upload not found, a quota used up), in its words.
  if (err instanceof ApiError) {
    return renderPage(c, { title: "Refused", body: <MessagePage message={err.message} /> }, err.status);
  }
  if (err instanceof HTTPException && err.status < 500) {
    return renderPage(
      c,
      { title: "Refused", body: <MessagePage message={err.message || "The request was refused."} /> },
      err.status as ContentfulStatusCode,
    );
  }
  const requestId = crypto.randomUUID();
  console.error(JSON.stringify({ level: "error", requestId, path: c.req.path, error: describeError(err) }));
  return renderPage(
    c,
    {
      title: "Something went wrong",
      body: <MessagePage message="Something went wrong on our side. Try again in a moment." requestId={requestId} />,
    },
    500,
  );
}

/**
 * The account dashboard: server-rendered pages (hono/jsx) on a session cookie. Mounted at
 * /dashboard by app.ts; every page is for the one account its session belongs to.
 */
export function dashboardApp() {
  const app = new Hono<DashboardEnv>();
  app.onError(renderDashboardError);
  app.route("/", assetRoutes);
  app.use(
    "*",
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", "data:"],
        // hls.js feeds the video element through Media Source Extensions, as blob: URLs.
        mediaSrc: ["'self'", "blob:"],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
      referrerPolicy: "same-origin",
    }),
    noStore,
    // A PUT is a part of an upload, held to the part's own size by its route (routes/uploads.tsx).
    except(
      (c) => c.req.method === "PUT",
      refusingUnreadableBodies(
        bodyLimit({
          maxSize: MAX_FORM_BYTES,
          onError: () => {
            throw new HTTPException(413, { message: "That form was too large." });
          },
        }),
        () => new HTTPException(400, { message: "That form could not be read." }),
      ),
    ),
    csrf(),
    init,
    loadSession,
  );
  app.route("/", authRoutes);
  // Everything after this point is for a signed-in user, and every POST carries the session's token.
  app.use("*", requireSignIn, sessionFormToken);
  app.route("/", accountRoutes);
  app.route("/", jobRoutes);
  app.route("/", uploadRoutes);
  app.all("*", (c) =>
    renderPage(c, { title: "Not found", body: <MessagePage message="There is no such page." /> }, 404),
  );
  return app;
}
