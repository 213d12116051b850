import { randomUUID } from "node:crypto";
import { eq, inArray, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { sessions, users } from "../../drizzle/schema";
import {
  SIGN_IN_PER_ADDRESS,
  SIGN_IN_PER_EMAIL,
  SIGN_IN_PER_EMAIL_FROM_ADDRESS,
  SIGN_UP_PER_ADDRESS,
  type ThrottleRule,
} from "../../worker/dashboard/auth/throttle";
import { tokenDigest } from "../../worker/dashboard/auth/tokens";
import { expectStatus } from "../support/api-client";
import { admin, api, stack } from "./harness";
import { DashboardSession, formToken, type Page, signedUp } from "./dashboard-session";

const sessionRow = async (token: string) =>
  (
    await admin.db
      .select()
      .from(sessions)
      .where(eq(sessions.tokenHash, await tokenDigest(token)))
  )[0];

/**
 * What a client can see of an answer: status, Location, headers and body; of Server-Timing, which
 * sub-requests ran and how many, not how long they took (the clock differs on every request).
 */
const visible = (page: Page) => ({
  status: page.status,
  location: page.location,
  headers: [...page.headers]
    .filter(([name]) => name !== "date")
    .map(([name, value]) => [name, name === "server-timing" ? value.replace(/;dur=[\d.]+/g, "") : value]),
  html: page.html,
});

describe("dashboard: sign-up", () => {
  it("creates a free account and sends the user to sign in, where the session cookie is HttpOnly SameSite=Lax; stores only a PBKDF2 hash", async () => {
    const session = new DashboardSession();
    const email = `New.User-${randomUUID()}@Example.com`;
    const form = await session.get("/dashboard/signup");
    expect(form.status).toBe(200);
    const res = await session.post("/dashboard/signup", {
      _csrf: formToken(form.html),
      email,
      password: "a long enough password",
    });
    expect(res.status).toBe(303);
    expect(res.location).toBe("/dashboard/signin?from=signup");
    expect(session.cookies.has("vep_session")).toBe(false);
    const signInPage = await session.get(res.location!);
    expect(signInPage.html).toContain("If that email was new, your account is ready");

    const signedIn = await session.signIn(email, "a long enough password");
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe("/dashboard");
    const cookie = signedIn.headers.getSetCookie().find((c) => c.startsWith("vep_session="))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\//);
    // Plain http (the local runner) is the one place the cookie is not Secure; see the workerd test for https.
    expect(cookie).not.toMatch(/Secure/i);

    const home = await session.get("/dashboard");
    expect(home.status).toBe(200);
    expect(home.html).toContain(email.toLowerCase());
    expect(home.html).toContain("0 of 10 jobs used");

    const [user] = await admin.db.select().from(users).where(eq(users.email, email.toLowerCase()));
    expect(user.passwordHash).toMatch(/^pbkdf2-sha256\$100000\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/);
    expect(user.passwordHash).not.toContain("a long enough password");
    const account = await admin.showAccount(user.accountId);
    expect(account).toMatchObject({ plan: "free", email: email.toLowerCase() });
  });

  it("answers a new email and one already in use (any case) alike, and leaves the existing account as it was", async () => {
    const { email, password } = await signedUp();
    const [before] = await admin.db.select().from(users).where(eq(users.email, email));
    const fresh = new DashboardSession();
    const taken = new DashboardSession(fresh.address);
    const forNew = await fresh.submit("/dashboard/signup", "/dashboard/signup", {
      email: `x-${randomUUID()}@example.com`,
      password: "another password",
    });
    const forTaken = await taken.submit("/dashboard/signup", "/dashboard/signup", {
      email: email.toUpperCase(),
      password: "another password",
    });
    expect(forNew.status).toBe(303);
    expect(visible(forTaken)).toEqual(visible(forNew));

    const [after] = await admin.db.select().from(users).where(eq(users.email, email));
    expect(after).toEqual(before);
    expect((await taken.signIn(email, "another password")).status).toBe(401);
    expect((await taken.signIn(email, password)).status).toBe(303);
  });

  it("refuses a malformed email or a bad password, creating nothing", async () => {
    const cases: [Record<string, string>, number, string][] = [
      [{ email: "not-an-email", password: "long enough pw" }, 400, "Enter a valid email address."],
      [{ email: `x-${randomUUID()}@example.com`, password: "short" }, 400, "Password: Use at least 8 characters."],
      [{ email: `x-${randomUUID()}@example.com`, password: "x".repeat(257) }, 400, "Use at most 256 characters."],
    ];
    for (const [fields, status, message] of cases) {
      const session = new DashboardSession();
      const res = await session.submit("/dashboard/signup", "/dashboard/signup", fields);
      expect(res.status, JSON.stringify(fields)).toBe(status);
      expect(res.html).toContain(message);
      expect(session.cookies.has("vep_session")).toBe(false);
    }
    const [{ n }] = await admin.db
      .select({ n: sql<number>`count(*)::int` })
      .from(users)
      .where(
        inArray(
          users.email,
          cases.map(([fields]) => fields.email),
        ),
      );
    expect(n).toBe(0);
  });
});

describe("dashboard: sign-in and sign-out", () => {
  it("a wrong password and an unknown email get the same refusal; the right one gets a fresh session", async () => {
    const { session: first, email, password } = await signedUp();
    const other = new DashboardSession();
    const wrong = await other.signIn(email, "not the password");
    const unknown = await other.signIn(`nobody-${randomUUID()}@example.com`, password);
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.html).toContain("The email or password is not right.");
    }
    expect(other.cookies.has("vep_session")).toBe(false);

    const ok = await other.signIn(email.toUpperCase(), password);
    expect(ok.status).toBe(303);
    expect(other.sessionToken()).not.toBe(first.sessionToken());
    expect((await other.get("/dashboard")).status).toBe(200);
  });

  it("sign-out ends the session on the server: the old cookie, replayed, no longer signs in", async () => {
    const { session } = await signedUp();
    const token = session.sessionToken();
    const home = await session.get("/dashboard");
    const out = await session.post("/dashboard/signout", { _csrf: formToken(home.html) });
    expect(out.status).toBe(303);
    expect(out.location).toBe("/dashboard/signin");
    expect(await sessionRow(token)).toBeUndefined();

    const replay = new DashboardSession();
    replay.cookies.set("vep_session", token);
    const res = await replay.get("/dashboard/keys");
    expect(res.status).toBe(303);
    expect(res.location).toBe("/dashboard/signin");
  });

  it("a session past its expiry is refused; one in use slides forward, never past its absolute limit", async () => {
    const { session } = await signedUp();
    const token = session.sessionToken();
    const row = await sessionRow(token);
    const now = Date.now();
    expect(row.expiresAt.getTime()).toBeGreaterThan(now + 6.9 * 86400_000);
    expect(row.absoluteExpiresAt.getTime()).toBeGreaterThan(now + 29.9 * 86400_000);

    // Used a day before it would expire: pushed to a week from now, and the cookie sent again.
    await admin.db
      .update(sessions)
      .set({ expiresAt: new Date(now + 86400_000) })
      .where(eq(sessions.id, row.id));
    const used = await session.get("/dashboard");
    expect(used.status).toBe(200);
    expect(used.headers.getSetCookie().some((c) => c.startsWith("vep_session="))).toBe(true);
    expect((await sessionRow(token)).expiresAt.getTime()).toBeGreaterThan(now + 6.9 * 86400_000);

    // Near the absolute limit it slides only up to it.
    const limit = new Date(now + 2 * 3600_000);
    await admin.db
      .update(sessions)
      .set({ expiresAt: new Date(now + 60_000), absoluteExpiresAt: limit })
      .where(eq(sessions.id, row.id));
    await session.get("/dashboard");
    expect((await sessionRow(token)).expiresAt.getTime()).toBe(limit.getTime());

    await admin.db
      .update(sessions)
      .set({ expiresAt: new Date(now - 1000) })
      .where(eq(sessions.id, row.id));
    const expired = await session.get("/dashboard");
    expect(expired.status).toBe(303);
    expect(expired.location).toBe("/dashboard/signin");
  });

  it("admin `user password` sets a new password and ends the user's sessions", async () => {
    const { session, email, password } = await signedUp();
    const result = await admin.setUserPassword(email, "a brand new password");
    expect(result.sessionsEnded).toBe(1);
    expect((await session.get("/dashboard")).status).toBe(303);
    expect((await new DashboardSession().signIn(email, password)).status).toBe(401);
    expect((await new DashboardSession().signIn(email, "a brand new password")).status).toBe(303);
  });
});

/** The rule's fixed window now: its counters start afresh at each window's edge. */
const windowOf = (rule: ThrottleRule) => Math.floor(Date.now() / 1000 / rule.windowSeconds);

/**
 * Runs a throttle's test, and once more should it fail across the edge of the rule's window
 * (every 15 minutes on the clock for sign-ins): its attempts were then counted in two windows.
 * Each run makes its own accounts and addresses, so the second starts from nothing.
 */
async function inOneWindow(rule: ThrottleRule, test: () => Promise<void>) {
  const started = windowOf(rule);
  try {
    await test();
  } catch (err) {
    if (windowOf(rule) === started) throw err;
    await test();
  }
}

describe("dashboard: sign-in throttling", () => {
  it("per email and address: an address spending an email's 10 attempts shuts out only itself, even with the right password", () =>
    inOneWindow(SIGN_IN_PER_EMAIL_FROM_ADDRESS, async () => {
      const { session: owner, email, password } = await signedUp();
      const attacker = new DashboardSession();
      // signedUp's sign-in was from the owner's address, so the attacker's count starts at 0.
      for (let i = 0; i < SIGN_IN_PER_EMAIL_FROM_ADDRESS.limit; i++)
        expect((await attacker.signIn(email, "wrong password")).status).toBe(401);
      const refused = await attacker.signIn(email, password);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(refused.html).toContain("Too many sign-in attempts for this email from your network");

      // The owner, from the address they signed in from and from one they never used.
      expect((await new DashboardSession(owner.address).signIn(email, password)).status).toBe(303);
      expect((await new DashboardSession().signIn(email, password)).status).toBe(303);
      expect((await attacker.signIn(email, password)).status).toBe(429);
    }));

  it("per email across addresses: past 100 attempts from many, a new address is a 429; one the account signed in from is not", () =>
    inOneWindow(SIGN_IN_PER_EMAIL, async () => {
      const { session: owner, email, password } = await signedUp();
      // The sign-up's sign-in counts: with these, the email's count is at its limit.
      const wrong = SIGN_IN_PER_EMAIL.limit - 1;
      const perAddress = SIGN_IN_PER_EMAIL_FROM_ADDRESS.limit;
      await Promise.all(
        Array.from({ length: Math.ceil(wrong / perAddress) }, async (_, n) => {
          const attacker = new DashboardSession();
          for (let i = n * perAddress; i < Math.min(wrong, (n + 1) * perAddress); i++)
            expect((await attacker.signIn(email, "wrong password")).status).toBe(401);
        }),
      );
      const refused = await new DashboardSession().signIn(email, password);
      expect(refused.status).toBe(429);
      expect(refused.html).toContain("Too many sign-in attempts for this email. Please wait");
      expect((await new DashboardSession(owner.address).signIn(email, password)).status).toBe(303);
      // Another user is not affected.
      const other = await signedUp();
      expect((await new DashboardSession().signIn(other.email, other.password)).status).toBe(303);
    }));

  it("per address: the 31st attempt from one address is a 429, whatever email it names", () =>
    inOneWindow(SIGN_IN_PER_ADDRESS, async () => {
      const session = new DashboardSession();
      const { email, password } = await signedUp();
      for (let i = 0; i < 30; i++)
        expect((await session.signIn(`guess-${i}-${randomUUID()}@example.com`, "password1")).status).toBe(401);
      const refused = await session.signIn(email, password);
      expect(refused.status).toBe(429);
      expect(refused.html).toContain("Too many sign-in attempts from your network");
      expect((await new DashboardSession().signIn(email, password)).status).toBe(303);
    }));

  it("per address counts an IPv6 address's /64: a host does not get a new allowance from each address of its network", async () => {
    const network = new DashboardSession().address.split(":").slice(0, 4).join(":");
    for (let i = 0; i < 30; i++) {
      const host = new DashboardSession(`${network}:${(i + 2).toString(16)}::${i.toString(16)}`);
      expect((await host.signIn(`guess-${i}-${randomUUID()}@example.com`, "password1")).status).toBe(401);
    }
    const refused = await new DashboardSession(`${network}:ffff:ffff:ffff:ffff`).signIn(
      `guess-${randomUUID()}@example.com`,
      "password1",
    );
    expect(refused.status).toBe(429);
    expect(refused.html).toContain("Too many sign-in attempts from your network");
  });
});

describe("dashboard: forms a client can send that Postgres cannot store, or that are not forms", () => {
  it("a NUL in the sign-in email or in a key's name, or a multipart body without its boundary, is a 400 page, not a 500", async () => {
    const signIn = new DashboardSession();
    const nul = await signIn.submit("/dashboard/signin", "/dashboard/signin", {
      email: "a\u0000b@example.com",
      password: "long enough password",
    });
    expect(nul.status).toBe(400);
    expect(nul.html).toContain("must not contain NUL");

    const { session } = await signedUp();
    const named = await session.submit("/dashboard/keys", "/dashboard/keys", { name: "build\u0000server" });
    expect(named.status).toBe(400);
    const keys = await session.get("/dashboard/keys");
    expect(keys.html).not.toContain("build");

    // Same-origin, so hono/csrf lets a multipart body through to the form's parser.
    for (const [path, from] of [
      ["/dashboard/signin", new DashboardSession()],
      ["/dashboard/keys", session],
    ] as const) {
      const res = await fetch(`${from.origin}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: {
          Origin: stack.apiUrl,
          "CF-Connecting-IP": from.address,
          Cookie: from.cookieHeader(),
          "Content-Type": "multipart/form-data",
        },
        body: "--no boundary here--",
      });
      expect(res.status, path).toBe(400);
      expect(await res.text(), path).toContain("That form could not be read");
    }
  });

  it("the sign-in page sends its form cookie again, so a page shown now does not carry a token whose cookie is about to expire", async () => {
    const visitor = new DashboardSession();
    const first = await visitor.get("/dashboard/signin");
    const again = await visitor.get("/dashboard/signin");
    expect(formToken(again.html)).toBe(formToken(first.html));
    expect(
      again.headers.getSetCookie().some((line) => line.startsWith("vep_form=") && /max-age=3600/i.test(line)),
    ).toBe(true);
  });
});

describe("dashboard: sign-up throttling", () => {
  it("the 11th sign-up in an hour from one address is a 429, and creates no account", () =>
    inOneWindow(SIGN_UP_PER_ADDRESS, async () => {
      const address = new DashboardSession().address;
      for (let i = 0; i < 10; i++) await new DashboardSession(address).signUp();
      const email = `one-too-many-${randomUUID()}@example.com`;
      const refused = await new DashboardSession(address).submit("/dashboard/signup", "/dashboard/signup", {
        email,
        password: "long enough password",
      });
      expect(refused.status).toBe(429);
      expect(refused.html).toContain("Too many sign-ups from your network");
      expect(await admin.db.select().from(users).where(eq(users.email, email))).toEqual([]);
    }));
});

describe("dashboard: CSRF", () => {
  it("a form posted without its token, with another session's token, or from another origin is refused (403) and does nothing", async () => {
    const { session } = await signedUp();
    const other = await signedUp();
    const token = formToken((await session.get("/dashboard/keys")).html);
    const otherToken = formToken((await other.session.get("/dashboard/keys")).html);
    const attempts: [Record<string, string>, Record<string, string> | undefined][] = [
      [{ name: "no token" }, undefined],
      [{ name: "empty token", _csrf: "" }, undefined],
      [{ name: "other session's token", _csrf: otherToken }, undefined],
      [{ name: "cross-site", _csrf: token }, { Origin: "https://evil.example" }],
      [{ name: "cross-site, no origin", _csrf: token }, { "Sec-Fetch-Site": "cross-site" }],
    ];
    for (const [fields, headers] of attempts) {
      const res = await session.post("/dashboard/keys", fields, headers);
      expect(res.status, fields.name).toBe(403);
      expect(res.html).toContain("This form could not be verified");
    }
    const keys = await session.get("/dashboard/keys");
    expect(keys.html).toContain("No keys yet.");
    // The same form with its token and a same-origin post works.
    expect((await session.post("/dashboard/keys", { name: "fine", _csrf: token })).status).toBe(201);
  });

  it("the sign-in form needs its double-submit token too", async () => {
    const { email, password } = await signedUp();
    const session = new DashboardSession();
    await session.get("/dashboard/signin");
    const res = await session.post("/dashboard/signin", { email, password });
    expect(res.status).toBe(403);
    expect(session.cookies.has("vep_session")).toBe(false);
  });
});

describe("dashboard: headers and routing", () => {
  it("pages carry secure headers and are never cached; / leads to the dashboard; unknown pages are a 404 page", async () => {
    const session = new DashboardSession();
    const page = await session.get("/dashboard/signin");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("x-content-type-options")).toBe("nosniff");
    expect(page.headers.get("x-frame-options")).toBe("SAMEORIGIN");
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.html.startsWith("<!doctype html>")).toBe(true);

    const root = await session.get("/");
    expect(root.status).toBe(302);
    expect(root.location).toBe("/dashboard");
    expect((await session.get("/dashboard")).location).toBe("/dashboard/signin");

    const { session: signedIn } = await signedUp();
    const missing = await signedIn.get("/dashboard/no-such-page");
    expect(missing.status).toBe(404);
    expect(missing.html).toContain("There is no such page.");
  });

  it("serves its script, stylesheet, hls.js and dash.js itself, and a 404 for any other name", async () => {
    for (const [name, type] of [
      ["dashboard.js", "text/javascript"],
      ["dashboard.css", "text/css"],
      ["hls.light.min.js", "text/javascript"],
      ["dash.all.min.js", "text/javascript"],
    ]) {
      const res = await api().raw({ method: "GET", path: `/dashboard/assets/${name}` });
      expectStatus(res, 200, name);
      expect(res.headers.get("content-type")).toContain(type);
      expect(String(res.body).length).toBeGreaterThan(500);
    }
    // dash.js's ES module build, which the page's script imports for its MediaPlayer.
    const dash = await api().raw({ method: "GET", path: "/dashboard/assets/dash.all.min.js" });
    expect(String(dash.body)).toMatch(/export\{[^}]*\bas MediaPlayer\b[^}]*\}/);
    // Names an object's prototype holds are no assets either.
    for (const name of ["nope.js", "constructor", "__proto__", "toString"])
      expect((await api().raw({ method: "GET", path: `/dashboard/assets/${name}` })).status, name).toBe(404);
  });
});
