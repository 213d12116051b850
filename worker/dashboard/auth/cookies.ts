import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { CookieOptions } from "hono/utils/cookie";

const SESSION_COOKIE = "vep_session";
/** The double-submit token of the sign-in and sign-up forms, which come before any session. */
const FORM_COOKIE = "vep_form";
const FORM_COOKIE_SECONDS = 60 * 60;

/**
 * Secure whenever the page is served over https (always, deployed): then the cookies also take
 * the `__Host-` prefix, which pins them to this host and path `/`. The local runner is plain
 * http, where a browser would drop a Secure cookie.
 */
function isSecure(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:";
}

function options(c: Context, extra: CookieOptions): CookieOptions {
  const secure = isSecure(c);
  return { path: "/", httpOnly: true, sameSite: "Lax", ...(secure ? { secure: true, prefix: "host" } : {}), ...extra };
}

const read = (c: Context, name: string) => getCookie(c, name, isSecure(c) ? "host" : undefined);

export const readSessionCookie = (c: Context) => read(c, SESSION_COOKIE);

export function writeSessionCookie(c: Context, token: string, expires: Date) {
  setCookie(c, SESSION_COOKIE, token, options(c, { expires }));
}

export function clearSessionCookie(c: Context) {
  deleteCookie(c, SESSION_COOKIE, options(c, {}));
}

export const readFormCookie = (c: Context) => read(c, FORM_COOKIE);

export function writeFormCookie(c: Context, token: string) {
  setCookie(c, FORM_COOKIE, token, options(c, { maxAge: FORM_COOKIE_SECONDS }));
}
