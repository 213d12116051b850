import { randomBytes } from "node:crypto";
import type { PoolMachine } from "../../../domain/pool";

/** The api stack's encoder app: its own name, so its pool's count in the shared Redis is its own. */
export const POOL_APP = `video-encoder-${randomBytes(4).toString("hex")}`;

const machine = (id: string, state: string): PoolMachine => ({
  id,
  state,
  config: { services: [{ concurrency: { hard_limit: 1 } }] },
});

/**
 * Eight Machines that take deliveries, running or stopped (the proxy starts a stopped one), and
 * one being destroyed, which takes none: parts go 8 − 2 = 6 at a time, not the default 8.
 */
export const POOL_MACHINES: PoolMachine[] = [
  ...Array.from({ length: 6 }, (_, i) => machine(`started-${i}`, "started")),
  machine("stopped-0", "stopped"),
  machine("suspended-0", "suspended"),
  machine("leaving-0", "destroying"),
];
