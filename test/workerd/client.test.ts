import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { ApiError, createVepClient } from "../../client";
import { workerVars } from "../../dev/worker-vars";
import { createApp } from "../../worker/app";

const stack = inject("stack");
const app = createApp();
const env = workerVars(stack.cloud, { publicUrl: stack.apiUrl, encoderUrl: stack.encoderUrl }, stack.internalSecret);

/** The client, its requests answered by the app in workerd with the bindings given. */
function clientOver(bindings: Record<string, string>) {
  return createVepClient({
    baseUrl: "http://api.test",
    apiKey: "spk_0000000000000000000000000000000000000000000",
    fetch: async (input, init) => {
      const ctx = createExecutionContext();
      const res = await app.fetch(new Request(input, init), bindings, ctx);
      await waitOnExecutionContext(ctx);
      return res;
    },
  });
}

describe("client: a 500 from the service", () => {
  it("is an ApiError of kind server with the requestId, and retryable", async () => {
    const databaseDown = clientOver({ ...env, DATABASE_URL: "postgres://postgres@127.0.0.1:9/none" });
    const err = await databaseDown.listJobs().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 500, kind: "server", error: "Internal server error", retryable: true });
    expect((err as ApiError).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });
});
