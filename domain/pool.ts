import { ENCODER_PARALLELISM } from "./jobs";

/**
 * The encoder pool as Fly's Machines API lists it (`GET /v1/apps/{app}/machines`): the fields
 * read here, each Machine's state and its services' concurrency (fly.toml's `hard_limit`).
 */
export interface PoolMachine {
  id: string;
  state: string;
  config?: { services?: { concurrency?: { hard_limit?: number } }[] };
}

/** The most parts in flight the Worker sets (its PART_PARALLELISM's bound). */
export const MAX_PART_PARALLELISM = 1000;

/**
 * States of a Machine that will take no delivery again. A stopped (or suspended) one counts: the
 * proxy starts it when a delivery finds the running ones busy; so does one being replaced by a
 * deploy, which comes back.
 */
const GONE = new Set(["destroying", "destroyed", "failed"]);

/** The deliveries one Machine takes at once: its service's hard limit, one (the encoder's fly.toml) when it names none. */
function deliveriesOf(machine: PoolMachine): number {
  const limits = (machine.config?.services ?? []).map((s) => s.concurrency?.hard_limit ?? 0).filter((n) => n > 0);
  return limits.length > 0 ? Math.max(...limits) : 1;
}

/**
 * Parts and joins in flight at once over the pool (docs/deploying.md#the-encoder-pool): every
 * delivery its Machines take at once, less the whole jobs' (ENCODER_PARALLELISM), never below 1,
 * so a pool too small for both still splits, its parts waiting behind the jobs.
 */
export function partParallelism(machines: readonly PoolMachine[]): number {
  const deliveries = machines.filter((m) => !GONE.has(m.state)).reduce((sum, m) => sum + deliveriesOf(m), 0);
  return Math.min(MAX_PART_PARALLELISM, Math.max(1, deliveries - ENCODER_PARALLELISM));
}
