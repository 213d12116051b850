/**
 * GET /presets answers 401 for any Authorization header that is sent and not a live key; a blank
 * one counts as none. Here the app gets the request exactly as sent, with no HTTP client or
 * proxy that might drop a blank header in between.
 */
import { describe, expect, inject, it } from "vitest";
import { workerVars } from "../../dev/worker-vars";
import { expectError, expectStatus } from "../support/api-client";
import { appClient } from "./app-client";

const stack = inject("stack");
const env = workerVars(stack.cloud, { publicUrl: stack.apiUrl, encoderUrl: stack.encoderUrl }, stack.internalSecret);

const presets = (headers: Record<string, string>) => appClient(env).listPresets({ headers });

describe("inside workerd: GET /presets with an Authorization that is not a key", () => {
  it("a header that is not a key is a 401; no header, or a blank one, is the free view", async () => {
    for (const value of ["Bearer", "Bearer spk_", " x ", "\u2028\u2029"]) {
      const res = await presets({ Authorization: value });
      expectError(res, 401, "Unauthorized", JSON.stringify(value));
    }
    for (const headers of [{}, { Authorization: "" }, { Authorization: "   " }] as Record<string, string>[]) {
      const anonymous = await presets(headers);
      expectStatus(anonymous, 200);
      expect(anonymous.body.meta.userPlan, JSON.stringify(headers)).toBe("free");
    }
  });
});
