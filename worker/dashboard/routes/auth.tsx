import { Hono, type Context } from "hono";
import { z } from "zod";
import { burnPasswordCheck, PASSWORD_MAX_LENGTH, verifyPassword } from "../auth/password";
import { clearSessionCookie, readFormCookie, writeFormCookie, writeSessionCookie } from "../auth/cookies";
import { endSession, startSession } from "../auth/session";
import {
  countAttempt,
  countSignInAttempt,
  rememberSignInNetwork,
  SIGN_IN_PER_ADDRESS,
  SIGN_IN_PER_EMAIL_FROM_ADDRESS,
  SIGN_UP_PER_ADDRESS,
  throttledNetwork,
  type ThrottleVerdict,
} from "../auth/throttle";
import { randomToken } from "../auth/tokens";
import { me, type DashboardEnv } from "../context";
import { createUserWithAccount, EmailTakenError, emailSchema, findUserByEmail, passwordSchema } from "../lib/users";
import { anonymousFormToken, requireSignIn, sessionFormToken } from "../middleware";
import { SignInPage, SignUpPage, ThrottledPage } from "../pages/auth";
import { renderPage } from "../pages/render";
import { paths } from "../paths";

type Ctx = Context<DashboardEnv>;

/**
 * The double-submit token of a sign-in or sign-up form: the one already in the cookie, or a new
 * one. The cookie is sent again either way, so a page shown now does not carry a token whose
 * cookie expires before the form is sent.
 */
function formTokenFor(c: Ctx): string {
  const existing = readFormCookie(c);
  const token = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : randomToken();
  writeFormCookie(c, token);
  return token;
}

/** Workers set CF-Connecting-IP to the client's address; the throttles count its network. */
const clientAddress = (c: Ctx) => throttledNetwork(c.req.header("CF-Connecting-IP") ?? "unknown");

function throttled(c: Ctx, verdict: Extract<ThrottleVerdict, { allowed: false }>, what: string, back: string) {
  c.header("Retry-After", String(verdict.retryAfterSeconds));
  return renderPage(
    c,
    {
      title: "Please wait",
      body: <ThrottledPage what={what} retryAfterSeconds={verdict.retryAfterSeconds} back={back} />,
    },
    429,
  );
}

/** Signs the user in, only if `passwordHash` is still the user's password (null otherwise: it changed meanwhile). */
async function signInAs(c: Ctx, userId: string, passwordHash: string) {
  const session = await startSession(c.get("services").db, userId, { passwordHash });
  if (!session) return null;
  writeSessionCookie(c, session.token, session.expiresAt);
  return c.redirect(paths.home, 303);
}

const formText = (value: unknown) => (typeof value === "string" ? value : "");

const signInForm = z.object({
  email: z.string().trim().toLowerCase().max(254),
  password: z.string().max(PASSWORD_MAX_LENGTH),
});

export const authRoutes = new Hono<DashboardEnv>()
  .get("/signin", (c) => {
    if (c.get("signedIn")) return c.redirect(paths.home, 303);
    const afterSignUp = c.req.query("from") === "signup";
    return renderPage(c, {
      title: "Sign in",
      body: <SignInPage formToken={formTokenFor(c)} afterSignUp={afterSignUp} />,
    });
  })
  .post("/signin", anonymousFormToken, async (c) => {
    const body = await c.req.parseBody();
    const { cache, db } = c.get("services");
    const email = formText(body.email).trim().toLowerCase();
    const refuse = (status: 400 | 401, message: string) =>
      renderPage(
        c,
        { title: "Sign in", body: <SignInPage formToken={formTokenFor(c)} email={email} errors={[message]} /> },
        status,
      );

    const network = clientAddress(c);
    const byAddress = await countAttempt(cache, SIGN_IN_PER_ADDRESS, network);
    if (!byAddress.allowed) return throttled(c, byAddress, "sign-in attempts from your network", paths.signIn);
    const parsed = signInForm.safeParse({ email: body.email, password: body.password });
    if (!parsed.success || !parsed.data.email || !parsed.data.password)
      return refuse(400, "Enter your email and password.");
    const byEmail = await countSignInAttempt(cache, parsed.data.email, network);
    if (!byEmail.allowed) {
      const fromHere = byEmail.rule === SIGN_IN_PER_EMAIL_FROM_ADDRESS;
      const what = `sign-in attempts for this email${fromHere ? " from your network" : ""}`;
      return throttled(c, byEmail, what, paths.signIn);
    }

    const user = await findUserByEmail(db, parsed.data.email);
    if (!user) {
      await burnPasswordCheck(parsed.data.password);
      return refuse(401, "The email or password is not right.");
    }
    if (!(await verifyPassword(parsed.data.password, user.passwordHash)))
      return refuse(401, "The email or password is not right.");
    const signedIn = await signInAs(c, user.id, user.passwordHash);
    if (!signedIn) return refuse(401, "The email or password is not right.");
    await rememberSignInNetwork(cache, parsed.data.email, network);
    return signedIn;
  })
  .get("/signup", (c) => {
    if (c.get("signedIn")) return c.redirect(paths.home, 303);
    return renderPage(c, { title: "Create an account", body: <SignUpPage formToken={formTokenFor(c)} /> });
  })
  .post("/signup", anonymousFormToken, async (c) => {
    const body = await c.req.parseBody();
    const { cache, db } = c.get("services");
    const typed = formText(body.email);
    const refuse = (status: 400, errors: string[]) =>
      renderPage(
        c,
        { title: "Create an account", body: <SignUpPage formToken={formTokenFor(c)} email={typed} errors={errors} /> },
        status,
      );

    const email = emailSchema.safeParse(body.email);
    const password = passwordSchema.safeParse(body.password);
    const errors = [
      ...(email.success ? [] : [email.error.issues[0].message]),
      ...(password.success ? [] : [`Password: ${password.error.issues[0].message}`]),
    ];
    if (!email.success || !password.success) return refuse(400, errors);

    const verdict = await countAttempt(cache, SIGN_UP_PER_ADDRESS, clientAddress(c));
    if (!verdict.allowed) return throttled(c, verdict, "sign-ups from your network", paths.signUp);
    // A new email and one already in use get the same answer after the same work (the password
    // hashed, one insert), so sign-up does not tell who has an account; the new user signs in next.
    try {
      await createUserWithAccount(db, { email: email.data, password: password.data, plan: "free" });
    } catch (err) {
      if (!(err instanceof EmailTakenError)) throw err;
    }
    return c.redirect(paths.signInAfterSignUp, 303);
  })
  .post("/signout", requireSignIn, sessionFormToken, async (c) => {
    await endSession(c.get("services").db, me(c).sessionId);
    clearSessionCookie(c);
    return c.redirect(paths.signIn, 303);
  });
