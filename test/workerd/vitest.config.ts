import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineProject } from "vitest/config";

/**
 * Runs inside workerd with the same wrangler.toml as the deployed Worker. The stack's addresses
 * arrive through provide/inject, so tests hand the app the bindings they want (including
 * broken ones, to exercise the failure paths).
 */
export default defineProject({
  plugins: [cloudflareTest({ wrangler: { configPath: "../../wrangler.toml" } })],
  test: {
    name: "workerd",
    include: ["**/*.test.ts"],
    globalSetup: ["../api/setup/global.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
