import { configDefaults, defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/support/longest-first-sequencer.ts";
import { wranglerTextModules } from "./test/support/wrangler-text-modules.ts";

/** Each file's CPU, with TEST_CPU_LOG set (docs/testing.md#where-the-cpu-goes). */
const CPU_BY_FILE = "test/support/cpu-by-file.ts";

/**
 * e2e, security-media and faults: each file starts a whole service of its own (a stack and an
 * encoder), two files at a time across the three. Most of their time is spent waiting (retry
 * delays, stall windows, services held down), so `npm test` runs them in a vitest of their own
 * beside the other projects (test/run-all.sh), on the cores those leave idle; in one vitest they
 * are a group of their own, after the others. Each encoder runs two jobs: two files can already
 * put four encodes on the two cores, three would put six.
 */
const WHOLE_SERVICE_FILES = { sequence: { groupOrder: 2 } };

/** The admin CLI's and vep's files (vep's package too): in the api folder, with their own project (below). */
const CLI_FILES = ["test/api/admin-cli.test.ts", "test/api/cli.test.ts", "test/api/vep-package.test.ts"];
/** In the api folder, with a project (and a stack) of its own (below). */
const DISPATCH_FILE = "test/api/dispatch.test.ts";

/**
 * api and dispatch: each a stack of its own (the delivery sink where the encoder goes), and a group
 * of their own after the first, two files at a time. Their many short files (about 2 s each) check
 * deliveries, sweeps and races, on cores the first group's FFmpeg and fuzzing no longer load.
 */
const API_GROUP = {
  setupFiles: [CPU_BY_FILE],
  globalSetup: ["test/api/setup/global.ts"],
  testTimeout: 60_000,
  hookTimeout: 120_000,
  sequence: { groupOrder: 1 },
};

/**
 * Projects by what they need running:
 * - unit: pure code; its setup refuses to start FFmpeg or ffprobe.
 * - render: FFmpeg on media generated with lavfi: every preset, the blend modes, the probe and
 *   the runner on real files, the timeline renderer, `npm run dev`'s sample media.
 * - cloud: each local stand-in, exercised with the official client library.
 * - api: the Worker in workerd, served as `npm run dev` serves it, against the local cloud and
 *   the machine's PostgreSQL.
 * - dispatch: QStash's deliveries to the encoder, against the same kind of stack as api (a
 *   stack of its own).
 * - cli: the admin CLI and vep against the same kind of stack as api (a stack of their own).
 * - security: the API-level campaigns (authentication and isolation, hostile input) against the
 *   same stack as api.
 * - workerd: the app inside workerd (@cloudflare/vitest-pool-workers) against the same stack; npm test
 *   runs it in a vitest of its own, under a watchdog (test/run-workerd.sh).
 * - e2e: the whole service with the real encoder; each file starts its own stack.
 * - security-media: hostile sources and media against that whole service (SSRF, playlists,
 *   truncated files, huge pictures, trickling sources).
 * - faults: the whole service while its parts fail (the encoder killed, PostgreSQL restarted,
 *   storage refusing uploads, a webhook endpoint failing).
 */
export default defineConfig({
  test: {
    // Two files at a time. vitest's default is the cores less one, which on two cores ran every
    // file alone, while most of these files wait on other processes (a stack, FFmpeg).
    maxWorkers: 2,
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        plugins: [wranglerTextModules("wrangler.toml")],
        test: {
          name: "unit",
          // Let the text modules' `?raw` stylesheets through Vite instead of vitest's empty CSS stub.
          css: { include: [/\?raw$/] },
          include: ["test/unit/**/*.test.ts"],
          setupFiles: ["test/unit/no-ffmpeg-setup.ts", CPU_BY_FILE],
          // One module cache per worker, not per file: its 75 files each imported their graph
          // afresh, about a third of the project's time (54 s → 35 s on two cores).
          isolate: false,
          testTimeout: 120_000,
        },
      },
      {
        test: {
          name: "render",
          setupFiles: [CPU_BY_FILE],
          include: ["test/render/**/*.test.ts"],
          testTimeout: 120_000,
          // Its files make their media with FFmpeg in beforeAll (four sources for the presets'
          // files), beside the first group's other work: one took over vitest's 10 s default
          // in a full run on a 2-core host.
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: "cloud",
          setupFiles: [CPU_BY_FILE],
          include: ["test/cloud/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The CLIs' files spawn a process per command (npm and tsx for the admin CLI, its build for
        // vep) and touch neither dispatch nor the sweeps, so they need not wait for the api group to
        // run alone: they run with the first group, against a stack of their own.
        test: {
          name: "cli",
          setupFiles: [CPU_BY_FILE],
          include: CLI_FILES,
          globalSetup: ["test/api/setup/global.ts"],
          // A test runs up to ten commands one after another, each a process start (npm, tsx, vep,
          // drizzle), several tests at once beside the first group's other files: the longest
          // took 39–58 s in full runs on a 2-core host, within 2 s of the 60 s that was its limit.
          // The limit is there to catch a hang, not a loaded host.
          testTimeout: 180_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: "api",
          include: ["test/api/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...CLI_FILES, DISPATCH_FILE],
          ...API_GROUP,
        },
      },
      {
        // The dispatch file holds every delivery at its sink to fill the encoder's two slots,
        // which would stall the deliveries of a file beside it: it has a stack of its own.
        test: {
          name: "dispatch",
          include: [DISPATCH_FILE],
          ...API_GROUP,
        },
      },
      {
        test: {
          name: "security",
          setupFiles: [CPU_BY_FILE],
          include: ["test/security/**/*.test.ts"],
          globalSetup: ["test/api/setup/global.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      "test/workerd/vitest.config.ts",
      {
        test: {
          name: "e2e",
          setupFiles: [CPU_BY_FILE],
          include: ["test/e2e/**/*.test.ts"],
          testTimeout: 300_000,
          hookTimeout: 180_000,
          ...WHOLE_SERVICE_FILES,
        },
      },
      {
        test: {
          name: "security-media",
          setupFiles: [CPU_BY_FILE],
          include: ["test/security-media/**/*.test.ts"],
          testTimeout: 180_000,
          hookTimeout: 180_000,
          ...WHOLE_SERVICE_FILES,
        },
      },
      {
        test: {
          name: "faults",
          setupFiles: [CPU_BY_FILE],
          include: ["test/faults/**/*.test.ts"],
          testTimeout: 300_000,
          hookTimeout: 180_000,
          ...WHOLE_SERVICE_FILES,
        },
      },
    ],
  },
});
