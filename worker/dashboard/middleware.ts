import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import { timingSafeEqual } from "hono/utils/buffer";
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPaths } from "../../domain/storable-text";
import { ApiError } from "../errors";
import { readFormCookie, readSessionCookie, writeSessionCookie } from "./auth/cookies";
import { resumeSession } from "./auth/session";
import type { DashboardEnv } from "./context";
import { paths } from "./paths";

/** Who is signed in (or null); a session whose expiry slid gets its cookie sent again. */
export const loadSession = createMiddleware<DashboardEnv>(async (c, next) => {
  const token = readSessionCookie(c);
  const signedIn = token ? await resumeSession(c.get("services").db, token) : null;
  if (token && signedIn?.renewed) writeSessionCookie(c, token, signedIn.expiresAt);
  c.set("signedIn", signedIn);
  await next();
});

/**
 * A request of the page's own script (the upload's steps, routes/uploads.tsx), which reads its
 * answers and refusals as JSON, in the API's error format (docs/contract.md §8.1).
 */
export const fromScript = (c: Context<DashboardEnv>) => c.req.header("Accept") === "application/json";

/**
 * Pages need a session: without one, to the sign-in page (303, so a refused POST becomes a GET).
 * The page's script hears a 401 instead, which it shows rather than follow.
 */
export const requireSignIn = createMiddleware<DashboardEnv>(async (c, next) => {
  if (c.get("signedIn")) return next();
  if (fromScript(c)) throw ApiError.unauthorized("You are signed out: sign in again, then upload the file again.");
  return c.redirect(paths.signIn, 303);
});

/**
 * The form's fields, parsed once (the handlers' parseBody gets them from Hono's cache). A body
 * that is not a form (a multipart one without its boundary) and a field Postgres cannot store
 * (a NUL in an email or a key's name) are refused here for every form, rather than failing
 * later as a 500.
 */
async function readForm(c: Context<DashboardEnv>) {
  let body: Awaited<ReturnType<typeof c.req.parseBody>>;
  try {
    body = await c.req.parseBody();
  } catch {
    throw new HTTPException(400, { message: "That form could not be read. Reload the page and try again." });
  }
  const fields = Object.values(body).filter((value) => typeof value === "string");
  if (unstorableTextPaths(fields, 1).length > 0)
    throw new HTTPException(400, { message: `A field of that form ${UNSTORABLE_TEXT_MESSAGE}.` });
  return body;
}

/** The header that carries the token on a PUT, whose body is a file's bytes, not a form. */
const TOKEN_HEADER = "X-CSRF-Token";

/**
 * Every form carries `_csrf`, compared in constant time with what this request should carry:
 * the session's synchronizer token, or before sign-in the double-submit cookie. The Origin
 * check (hono/csrf) already stops cross-site posts in current browsers; the token also covers
 * clients that send no Origin. A PUT (an upload's bytes) carries it in TOKEN_HEADER: a header
 * another site cannot set without a CORS preflight, which this origin never grants.
 */
function formToken(expected: (c: Context<DashboardEnv>) => string | undefined) {
  return createMiddleware<DashboardEnv>(async (c, next) => {
    if (c.req.method !== "POST" && c.req.method !== "PUT") return next();
    const sent = c.req.method === "PUT" ? c.req.header(TOKEN_HEADER) : (await readForm(c))._csrf;
    const wanted = expected(c);
    if (typeof sent !== "string" || !wanted || !(await timingSafeEqual(sent, wanted))) throw new HTTPException(403);
    await next();
  });
}

export const sessionFormToken = formToken((c) => c.get("signedIn")?.csrfToken);
export const anonymousFormToken = formToken(readFormCookie);

/** Pages show keys, secrets and signed links: never cached, by the browser or anyone between. */
export const noStore = createMiddleware(async (c, next) => {
  await next();
  if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-store");
});
