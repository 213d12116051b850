import { every } from "hono/combine";
import { createMiddleware } from "hono/factory";
import { setMetric, timing } from "hono/timing";
import type { AppEnv } from "../context";
import { openServices } from "../services";
import { collectTimings, SubrequestTimings } from "../services/timing";

/**
 * Opens the request's clients and tallies the time spent waiting on each kind of sub-request
 * (database, cache, storage HEAD, signing, queue), sent back in a Server-Timing header, so
 * where a request's time goes can be read from outside (bench/api.ts does).
 */
const openAndTally = createMiddleware<AppEnv>(async (c, next) => {
  c.set("services", openServices(c.env));
  const timings = new SubrequestTimings();
  await collectTimings(timings, next);
  for (const [kind, { ms, count }] of timings.entries())
    setMetric(c, kind, ms, `${count} call${count === 1 ? "" : "s"}`);
});

export const init = every(timing({ totalDescription: "time spent waiting" }), openAndTally);
