/// <reference path="../../node_modules/@cloudflare/vitest-pool-workers/types/cloudflare-test.d.ts" />
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { workerVars } from "../../dev/worker-vars";
import { createApp } from "../../worker/app";

const stack = inject("stack");
const app = createApp();
const env = workerVars(stack.cloud, { publicUrl: stack.apiUrl, encoderUrl: stack.encoderUrl }, stack.internalSecret);
const ORIGIN = "https://dashboard.example";

async function send(path: string, init: RequestInit = {}) {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`${ORIGIN}${path}`, { redirect: "manual", ...init }), env, ctx);
  await waitOnExecutionContext(ctx);
  return { res, html: await res.text() };
}

const cookieValue = (res: Response, name: string) => {
  const line = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  return { line, value: line?.slice(name.length + 1).split(";")[0] };
};

describe("inside workerd: the dashboard over https", () => {
  it("signs up with PBKDF2 at 100,000 iterations, then signs in; cookies are Secure, HttpOnly, SameSite=Lax and __Host- prefixed", async () => {
    const form = await send("/dashboard/signup");
    expect(form.res.status).toBe(200);
    const formCookie = cookieValue(form.res, "__Host-vep_form");
    expect(formCookie.line).toMatch(/; Secure/);
    const token = /name="_csrf" value="([^"]+)"/.exec(form.html)![1];

    const email = `workerd-${crypto.randomUUID()}@example.com`;
    const post = (path: string) =>
      send(path, {
        method: "POST",
        headers: {
          "Content-Type": "application/x-www-form-urlencoded",
          Origin: ORIGIN,
          Cookie: `__Host-vep_form=${formCookie.value}`,
        },
        body: new URLSearchParams({ _csrf: token, email, password: "a long enough password" }),
      });
    const signUp = await post("/dashboard/signup");
    expect(signUp.res.status).toBe(303);
    expect(signUp.res.headers.get("location")).toBe("/dashboard/signin?from=signup");
    expect(cookieValue(signUp.res, "__Host-vep_session").line).toBeUndefined();

    const signIn = await post("/dashboard/signin");
    expect(signIn.res.status).toBe(303);
    const session = cookieValue(signIn.res, "__Host-vep_session");
    expect(session.line).toMatch(/; Path=\//);
    expect(session.line).toMatch(/; Secure/);
    expect(session.line).toMatch(/; HttpOnly/);
    expect(session.line).toMatch(/; SameSite=Lax/);

    const home = await send("/dashboard", { headers: { Cookie: `__Host-vep_session=${session.value}` } });
    expect(home.res.status).toBe(200);
    expect(home.html).toContain(email);
    expect(home.res.headers.get("strict-transport-security")).toMatch(/max-age=/);

    // Over https only the prefixed cookie counts: the bare name is not the session.
    const bare = await send("/dashboard", { headers: { Cookie: `vep_session=${session.value}` } });
    expect(bare.res.status).toBe(303);
  });
});
