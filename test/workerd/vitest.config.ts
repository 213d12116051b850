import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { fileURLToPath } from "node:url";
import { defineProject } from "vitest/config";

/**
 * Runs inside workerd with the same wrangler.toml as the deployed Worker. The stack's addresses
 * arrive through provide/inject, so tests hand the app the bindings they want (including
 * broken ones, to exercise the failure paths).
 */
export default defineProject({
  plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" } })],
  test: {
    name: "workerd",
    root: fileURLToPath(new URL("../..", import.meta.url)),
    include: ["test/workerd/**/*.test.ts"],
    // One workerd and its module cache for the files a worker runs, not one each: loading the app
    // into a fresh one for every file is slow (docs/testing.md#order-and-time). The app keeps its
    // clients per set of bindings (worker/services/index.ts), so a file's broken bindings never
    // reach the next.
    isolate: false,
    globalSetup: ["test/api/setup/global.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
