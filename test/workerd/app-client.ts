import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { createApp } from "../../worker/app";
import { createApiClient, fetchExchange } from "../support/api-client";

const app = createApp();

/** The suites' API client, its requests answered by the app inside workerd with these bindings. */
export function appClient(bindings: Record<string, string>, apiKey?: string) {
  return createApiClient({
    baseUrl: "http://api.test",
    apiKey,
    exchange: fetchExchange(async (request) => {
      const ctx = createExecutionContext();
      const res = await app.fetch(request, bindings, ctx);
      await waitOnExecutionContext(ctx);
      return res;
    }),
  });
}
