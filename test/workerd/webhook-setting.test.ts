/// <reference path="../../node_modules/@cloudflare/vitest-pool-workers/types/cloudflare-test.d.ts" />
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { workerVars } from "../../dev/worker-vars";
import { createApp } from "../../worker/app";
import { startSession } from "../../worker/dashboard/auth/session";
import { createUserWithAccount } from "../../worker/dashboard/lib/users";
import { openServices } from "../../worker/services";

const stack = inject("stack");
const app = createApp();
/** The local stacks' bindings (ALLOW_LOOPBACK_WEBHOOKS "true"), and the same as production has it. */
const development = workerVars(
  stack.cloud,
  { publicUrl: stack.apiUrl, encoderUrl: stack.encoderUrl },
  stack.internalSecret,
);
const production = { ...development, ALLOW_LOOPBACK_WEBHOOKS: "false" };
const ORIGIN = "https://dashboard.example";
const LOOPBACK = "http://127.0.0.1:9/hooks";

/** A signed-in dashboard user, the session made in the database rather than through the sign-in form. */
async function signedIn() {
  const { db } = openServices(development);
  const user = await createUserWithAccount(db, {
    email: `setting-${crypto.randomUUID()}@example.com`,
    password: "a long enough password",
    plan: "free",
  });
  const session = await startSession(db, user.userId);
  if (!session) throw new Error("no session started");
  const cookie = `__Host-vep_session=${session.token}`;
  const send = async (bindings: Record<string, string>, path: string, form?: Record<string, string>) => {
    const ctx = createExecutionContext();
    const init: RequestInit = form
      ? {
          method: "POST",
          headers: { Cookie: cookie, Origin: ORIGIN, "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams(form),
        }
      : { headers: { Cookie: cookie } };
    const res = await app.fetch(new Request(`${ORIGIN}${path}`, { redirect: "manual", ...init }), bindings, ctx);
    await waitOnExecutionContext(ctx);
    return { status: res.status, html: await res.text() };
  };
  const post = async (bindings: Record<string, string>, path: string, fields: Record<string, string> = {}) => {
    const page = await send(bindings, "/dashboard/webhook");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.html)?.[1] ?? "";
    return send(bindings, path, { _csrf: csrf, ...fields });
  };
  return { post };
}

describe("inside workerd: ALLOW_LOOPBACK_WEBHOOKS decides loopback webhooks", () => {
  it("off, as in production, a loopback URL is a form error; on, it is saved", async () => {
    const { post } = await signedIn();
    const refused = await post(production, "/dashboard/webhook", { url: LOOPBACK });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain("Webhooks go to public addresses only: 127.0.0.1 is a loopback address or name.");
    expect((await post(development, "/dashboard/webhook", { url: LOOPBACK })).status).toBe(303);
  });

  it("off, a loopback URL saved while it was on gets no test event: refused before sending", async () => {
    const { post } = await signedIn();
    expect((await post(development, "/dashboard/webhook", { url: LOOPBACK })).status).toBe(303);
    const tested = await post(production, "/dashboard/webhook/test");
    expect(tested.status).toBe(200);
    expect(tested.html).toContain(
      "Test event not sent: Webhooks go to public addresses only: 127.0.0.1 is a loopback address or name.",
    );
    // On, the same URL is tried: nothing listens there.
    expect((await post(development, "/dashboard/webhook/test")).html).toContain(
      "Test event not delivered: the endpoint could not be reached",
    );
  });
});
