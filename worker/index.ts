import { createApp } from "./app";
import { sweepStaleJobs } from "./lib/sweep";
import { openServices } from "./services";

const app = createApp();

export default {
  fetch: app.fetch,
  /** Cron (wrangler.toml [triggers]): the stale-job sweep. */
  async scheduled(_controller: unknown, env: unknown, ctx: { waitUntil(p: Promise<unknown>): void }) {
    ctx.waitUntil(sweepStaleJobs(openServices(env)));
  },
};
