import { createApp } from "./app";
import { sweep } from "./lib/sweep";
import { openServices } from "./services";

const app = createApp();

export default {
  fetch: app.fetch,
  /** Cron (wrangler.toml [triggers]): the sweep (stale jobs, lost dispatches, dropped messages, pending webhooks, expired sessions). */
  async scheduled(_controller: unknown, env: unknown, ctx: { waitUntil(p: Promise<unknown>): void }) {
    ctx.waitUntil(sweep(openServices(env)));
  },
};
