/**
 * Runs fast-check properties against the live service: several independent lanes at once (the
 * service is I/O-bound, one request at a time would leave it idle), each shrinking its own
 * counterexample, and a tally of the cases each route received, printed when the file ends.
 */
import fc from "fast-check";
import { afterAll } from "vitest";

const tally = new Map<string, number>();

afterAll(() => {
  const lines = [...tally].map(([route, cases]) => `  ${route}: ${cases} cases`);
  if (lines.length) console.log(`fuzz cases sent\n${lines.join("\n")}`);
});

export function countCase(route: string) {
  tally.set(route, (tally.get(route) ?? 0) + 1);
}

export interface FuzzOptions {
  /** Cases in all, shared among the lanes. */
  runs: number;
  lanes?: number;
}

/** FUZZ_SCALE multiplies every property's runs: 0.1 for a quick look, 10 for a long campaign. */
const scale = Number(process.env.FUZZ_SCALE ?? 1);
/**
 * Shrinking replays requests against the service hundreds of times, which can outlast the test's
 * timeout on large cases; the first failing case is reported as found unless FUZZ_SHRINK=1.
 */
const shrink = process.env.FUZZ_SHRINK === "1";

/**
 * `fc.assert` over `lanes` concurrent properties, each with its own seed derived from one base
 * seed (fast-check prints it with any counterexample; FUZZ_SEED replays a run).
 */
export async function fuzz<T>(
  arbitrary: fc.Arbitrary<T>,
  check: (value: T) => Promise<void>,
  { runs, lanes = 6 }: FuzzOptions,
) {
  const base = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() ^ (Math.random() * 0x7fffffff);
  const perLane = Math.max(1, Math.ceil((runs * scale) / lanes));
  // allSettled: a failing lane shrinks while the others finish, so nothing is left running.
  const outcomes = await Promise.allSettled(
    Array.from({ length: lanes }, (_, lane) =>
      fc.assert(fc.asyncProperty(arbitrary, check), {
        numRuns: perLane,
        seed: (base + lane) | 0,
        endOnFailure: !shrink,
      }),
    ),
  );
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
  if (failed) throw failed.reason;
}
