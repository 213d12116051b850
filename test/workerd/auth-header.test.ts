/**
 * GET /presets answers 401 for any Authorization header that is sent and not a live key, an
 * empty one included. Over the wire, wrangler dev drops an empty Authorization before the Worker
 * sees it (so there it reads as no header); here the app gets the request as sent.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { workerVars } from "../../dev/worker-vars";
import { createApp } from "../../worker/app";

const stack = inject("stack");
const env = workerVars(stack.cloud, { publicUrl: stack.apiUrl, encoderUrl: stack.encoderUrl }, stack.internalSecret);
const app = createApp();

async function presets(headers: Record<string, string>) {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request("http://api.test/api/v1/presets", { headers }), env, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("inside workerd: GET /presets with an Authorization that is not a key", () => {
  it("an empty header is a 401, like any other bad one; no header is the free view", async () => {
    for (const value of ["", "Bearer", "Bearer spk_"]) {
      const res = await presets({ Authorization: value });
      expect(res.status, JSON.stringify(value)).toBe(401);
      expect(res.body.error).toBe("Unauthorized");
    }
    const anonymous = await presets({});
    expect(anonymous.status).toBe(200);
    expect((anonymous.body.meta as { userPlan: string }).userPlan).toBe("free");
  });
});
