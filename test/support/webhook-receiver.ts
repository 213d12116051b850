import { EventEmitter, once } from "node:events";
import { createServer } from "node:http";

export interface ReceivedHook {
  headers: Record<string, string>;
  body: string;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/**
 * An HTTP endpoint on this machine that keeps every webhook delivered to it. `refuseFirst`
 * attempts per job are answered 503 after `holdMs`, as a struggling endpoint would.
 */
export async function startWebhookReceiver(opts: { refuseFirst?: number; holdMs?: number } = {}) {
  const received: ReceivedHook[] = [];
  // Waits are on arrivals, not on polling, and need no test runner: the benches wait here too.
  const arrivals = new EventEmitter();
  const attemptsOf = (jobId: string) => received.filter((h) => JSON.parse(h.body).jobId === jobId);
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const hook = { headers: req.headers as Record<string, string>, body, at: Date.now() };
      received.push(hook);
      arrivals.emit("hook");
      const refuse = attemptsOf(JSON.parse(body).jobId).length <= (opts.refuseFirst ?? 0);
      setTimeout(() => res.writeHead(refuse ? 503 : 204).end(), refuse ? (opts.holdMs ?? 0) : 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  async function waitForAttempts(jobId: string, count: number, timeoutMs = 20_000): Promise<ReceivedHook[]> {
    const deadline = AbortSignal.timeout(timeoutMs);
    for (;;) {
      const hits = attemptsOf(jobId);
      if (hits.length >= count) return hits;
      await once(arrivals, "hook", { signal: deadline }).catch(() => {
        throw new Error(`fewer than ${count} webhook attempts for ${jobId} in ${timeoutMs} ms`);
      });
    }
  }
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`,
    received,
    /** The first delivery whose payload is about `jobId`. */
    waitFor: async (jobId: string, timeoutMs?: number) => (await waitForAttempts(jobId, 1, timeoutMs))[0],
    waitForAttempts,
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}
