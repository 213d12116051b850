import { describe, expect, it } from "vitest";
import { MAX_PART_PARALLELISM, type PoolMachine, partParallelism } from "../../../domain/pool";

const machine = (state: string, hardLimit?: number): PoolMachine => ({
  id: `${state}-${hardLimit}`,
  state,
  config: { services: [{ concurrency: hardLimit === undefined ? undefined : { hard_limit: hardLimit } }] },
});
const many = (count: number, state = "started", hardLimit = 1) =>
  Array.from({ length: count }, () => machine(state, hardLimit));

describe("the parts' parallelism from the encoder pool", () => {
  it("is every delivery the Machines take at once, less the 2 whole jobs'", () => {
    expect(partParallelism(many(10))).toBe(8);
    expect(partParallelism(many(52))).toBe(50);
    expect(partParallelism([...many(3, "started", 2), machine("started", 4)])).toBe(8);
  });

  it("counts stopped and suspended Machines, which the proxy starts for a delivery, and not those going away", () => {
    expect(partParallelism([...many(4), ...many(3, "stopped"), ...many(1, "suspended")])).toBe(6);
    // One a deploy is replacing comes back.
    expect(partParallelism([...many(4), ...many(2, "replacing")])).toBe(4);
    expect(partParallelism([...many(4), ...many(5, "destroying"), ...many(5, "destroyed"), ...many(2, "failed")])).toBe(
      2,
    );
  });

  it("takes one delivery a Machine whose services name no hard limit (the encoder's own, one job each)", () => {
    expect(partParallelism([machine("started"), { id: "bare", state: "started" }, ...many(2)])).toBe(2);
  });

  it("is never below 1, so a pool too small for both still splits, nor above the Worker's bound", () => {
    expect(partParallelism([])).toBe(1);
    expect(partParallelism(many(2))).toBe(1);
    expect(partParallelism(many(5000))).toBe(MAX_PART_PARALLELISM);
  });
});
