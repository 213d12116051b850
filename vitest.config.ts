import { defineConfig } from "vitest/config";

/**
 * Projects by what they need running:
 * - unit: pure code and FFmpeg on generated media; nothing else.
 * - cloud: each local stand-in, exercised with the official client library.
 */
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          testTimeout: 120_000,
        },
      },
      {
        test: {
          name: "cloud",
          include: ["test/cloud/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
