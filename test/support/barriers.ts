import { expect, vi } from "vitest";

/**
 * A barrier on Node's timers: Node fires the timers of one duration in the order they were set,
 * so once a ticker of `intervalMs` set after another interval has ticked n times, that interval
 * has had its n turns too. A test that claims an interval did nothing waits for these turns, not
 * for a time.
 */
export function timerTurns(intervalMs: number) {
  let ticks = 0;
  const ticker = setInterval(() => ticks++, intervalMs);
  return {
    /** Resolves once the ticker has ticked `count` more times. */
    async passed(count: number): Promise<void> {
      const until = ticks + count;
      await vi.waitFor(() => expect(ticks).toBeGreaterThanOrEqual(until), { timeout: 30_000, interval: intervalMs });
    },
    stop: () => clearInterval(ticker),
  };
}

/**
 * One turn of the event loop: every promise reaction queued so far has run, and the ones they
 * queued. What code driven by promises alone (no timer, no I/O) would do next, it has done.
 */
export const microtasksDrained = () => new Promise<void>((resolve) => setImmediate(resolve));
