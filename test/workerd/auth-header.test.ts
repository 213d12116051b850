/**
 * GET /presets answers 401 for any Authorization header that is sent and not a live key, an
 * empty one included. Over the wire, wrangler dev drops an empty Authorization before the Worker
 * sees it (so there it reads as no header); here the app gets the request as sent.
 */
import { describe, expect, inject, it } from "vitest";
import { workerVars } from "../../dev/worker-vars";
import { expectError, expectStatus } from "../support/api-client";
import { appClient } from "./app-client";

const stack = inject("stack");
const env = workerVars(stack.cloud, { publicUrl: stack.apiUrl, encoderUrl: stack.encoderUrl }, stack.internalSecret);

const presets = (headers: Record<string, string>) => appClient(env).listPresets({ headers });

describe("inside workerd: GET /presets with an Authorization that is not a key", () => {
  it("an empty header is a 401, like any other bad one; no header is the free view", async () => {
    for (const value of ["", "Bearer", "Bearer spk_"]) {
      const res = await presets({ Authorization: value });
      expectError(res, 401, "Unauthorized", JSON.stringify(value));
    }
    const anonymous = await presets({});
    expectStatus(anonymous, 200);
    expect(anonymous.body.meta.userPlan).toBe("free");
  });
});
