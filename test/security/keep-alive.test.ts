/**
 * A client calling on a steady 5 s cadence, as a timer service does: every call is answered by
 * the Worker. workerd lets an idle connection go after 5 s; a proxy in front of it whose pool
 * gives up on idle connections after the same 5 s writes some of these calls on a connection at
 * the moment it is closed, and `wrangler dev`'s proxy then answers a POST with 503 "Your worker
 * restarted mid-request" (a known wrangler issue), which is why the local runner serves the
 * Worker without it.
 */
import { describe, expect, it } from "vitest";
import { stack } from "./client";

const CADENCE_MS = 5000;
const CALLS = 8;

describe("connections: a client calling every 5 s", () => {
  it(
    "gets every answer from the Worker, POSTs included",
    async () => {
      const start = Date.now();
      const answers: string[] = [];
      for (let i = 0; i < CALLS; i++) {
        // Sent at fixed times from the start, not 5 s after the previous answer: the phase is what matters.
        await new Promise((r) => setTimeout(r, Math.max(0, start + i * CADENCE_MS - Date.now())));
        const res = await fetch(`${stack.apiUrl}/api/v1/jobs`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: "{}",
        });
        answers.push(`${res.status} ${(await res.text()).slice(0, 60)}`);
      }
      expect(answers.filter((a) => !a.startsWith("401 "))).toEqual([]);
    },
    CALLS * CADENCE_MS + 30_000,
  );
});
