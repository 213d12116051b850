import type { Job } from "../../drizzle/schema";
import { LINK_TTL_SECONDS, type PlanId } from "../../domain/plans";
import type { Services } from "../services";
import type { SignedLink } from "../services/storage";

export type OutputState =
  | { kind: "signed"; key: string; link: SignedLink }
  | { kind: "not-ready" }
  | { kind: "missing" }
  | { kind: "legacy" };

/**
 * How long a HEAD that found an output is remembered (Redis), so a client polling a completed
 * job, or paging through its list, does not pay a storage round trip on every call. Only
 * finding is remembered: outputs are written before their job completes and never rewritten, so
 * "found" is what nearly every check says, and a removed output shows as removed at most this
 * long after it went (a link signed meanwhile answers 404, as one signed just before the
 * removal would). "Missing" is rare and cheap to ask again, and remembering it would hide an
 * output put back for as long.
 */
export const FOUND_OUTPUT_TTL_SECONDS = 60;

export const foundOutputEntry = (key: string) => `output-found:${key}`;

type Outputs = Pick<Services, "storage" | "cache">;

/** What a job's output link is decided on. */
export type OutputFacts = Pick<Job, "status" | "storageLayout" | "outputKey">;

/** The key to sign (and the only output key the Worker reads), or why there is none; storage is not asked. */
export function signableKey(job: OutputFacts): string | Exclude<OutputState, { kind: "signed" }> {
  if (job.status !== "completed") return { kind: "not-ready" };
  if (job.storageLayout === "legacy") return { kind: "legacy" };
  return job.outputKey ?? { kind: "missing" };
}

/** Which of `keys` exist: remembered ones from one Redis read, the rest by HEAD (remembered when found). */
async function existing({ storage, cache }: Outputs, keys: string[], recheck: boolean): Promise<Set<string>> {
  const remembered =
    recheck || !keys.length ? [] : await cache.mget<(unknown | null)[]>(...keys.map(foundOutputEntry)).catch(() => []);
  const found = new Set(keys.filter((_, i) => remembered[i] != null));
  const heads = await Promise.all(
    keys.filter((key) => !found.has(key)).map(async (key) => ({ key, exists: await storage.exists(key) })),
  );
  const newlyFound = heads.filter((head) => head.exists).map((head) => head.key);
  if (newlyFound.length) {
    const remember = cache.pipeline();
    for (const key of newlyFound) remember.set(foundOutputEntry(key), 1, { ex: FOUND_OUTPUT_TTL_SECONDS });
    await remember.exec().catch(() => undefined);
  }
  return new Set([...found, ...newlyFound]);
}

/**
 * Signs completed jobs' outputs afresh (one link per job, in order). Outputs removed from
 * storage and outputs under the legacy layout cannot be signed (docs/contract.md §3.1, the
 * cases 3 and 4 of a null outputUrl; download-url's 400 and 410, §5.5). `recheck` asks storage
 * even when a HEAD found the output within the last minute: download-url's answer about a
 * removed output stays exact.
 */
export async function outputStates(
  outputs: Outputs,
  jobs: OutputFacts[],
  plan: PlanId,
  { recheck = false } = {},
): Promise<OutputState[]> {
  const keys = jobs.map(signableKey);
  const found = await existing(outputs, [...new Set(keys.filter((key) => typeof key === "string"))], recheck);
  return Promise.all(
    keys.map(async (key): Promise<OutputState> => {
      if (typeof key !== "string") return key;
      if (!found.has(key)) return { kind: "missing" };
      return { kind: "signed", key, link: await outputs.storage.signGet(key, LINK_TTL_SECONDS[plan]) };
    }),
  );
}

export async function outputState(
  outputs: Outputs,
  job: OutputFacts,
  plan: PlanId,
  options: { recheck?: boolean } = {},
): Promise<OutputState> {
  const [state] = await outputStates(outputs, [job], plan, options);
  return state;
}
