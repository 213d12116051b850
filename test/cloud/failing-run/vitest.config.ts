import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * A run that must fail, set up as `npm test`'s workerd project is (workerd's pool, and the
 * stack started by the api setup in vitest's own process): see exit-code.test.ts.
 */
export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" } })],
  test: {
    root: fileURLToPath(new URL("../../..", import.meta.url)),
    include: ["test/cloud/failing-run/fails.check.ts"],
    globalSetup: ["test/api/setup/global.ts"],
    hookTimeout: 120_000,
  },
});
