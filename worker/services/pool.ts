import type { Redis } from "@upstash/redis/cloudflare";
import { type PoolMachine, partParallelism } from "../../domain/pool";
import { PART_PARALLELISM } from "../../domain/split";
import type { Env } from "../env";
import { describeError } from "./error-log";
import { measured } from "./timing";

/** The encoder pool, as the Worker sizes split jobs' flow control by it. */
export interface Pool {
  /** Parts and joins in flight at once (QStash's flow control, key `parts`). */
  partParallelism(): Promise<number>;
}

/** How long a count of the pool stands: a Machine added or destroyed is seen within a minute. */
const POOL_MEMORY_SECONDS = 60;
/** A Machines API that does not answer within this holds back no publish longer. */
const POOL_TIMEOUT_MS = 3000;

/**
 * Where the parts' parallelism comes from (docs/deploying.md#the-encoder-pool): PART_PARALLELISM
 * when it is set; otherwise, with FLY_APP and FLY_API_TOKEN, the encoder app's Machines as Fly's
 * Machines API lists them, remembered for a minute in Redis so publishes do not each ask; else
 * the default of 8. A Machines API that fails is logged with its cause, and the default stands for
 * that minute: a publish is never refused for it.
 */
export function createPool(env: Env, cache: () => Redis): Pool {
  const fixed = env.PART_PARALLELISM;
  const { FLY_APP: app, FLY_API_TOKEN: token } = env;
  if (fixed !== undefined || !app || !token) {
    const parallelism = fixed ?? PART_PARALLELISM;
    return { partParallelism: async () => parallelism };
  }
  const machinesUrl = new URL(`/v1/apps/${encodeURIComponent(app)}/machines`, env.FLY_API_URL).href;
  const key = `pool:${app}:part-parallelism`;
  const logFailure = (msg: string, err: unknown) =>
    console.error(JSON.stringify({ level: "error", msg, error: describeError(err) }));
  async function counted(): Promise<number> {
    try {
      const res = await measured("pool", () =>
        fetch(machinesUrl, {
          headers: { Authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(POOL_TIMEOUT_MS),
        }),
      );
      if (!res.ok) throw new Error(`Fly's Machines API answered ${res.status} for ${machinesUrl}`);
      const machines = (await res.json()) as PoolMachine[];
      if (!Array.isArray(machines)) throw new Error(`Fly's Machines API answered no list for ${machinesUrl}`);
      return partParallelism(machines);
    } catch (err) {
      logFailure(`the encoder pool could not be counted; parts go ${PART_PARALLELISM} at a time for a minute`, err);
      return PART_PARALLELISM;
    }
  }
  // Redis unreachable costs a count of the pool per publish, never the publish.
  async function read(): Promise<number> {
    const known = await cache()
      .get<number>(key)
      .catch((err) => logFailure("the pool's count could not be read from Redis", err));
    if (typeof known === "number") return known;
    const parallelism = await counted();
    await cache()
      .set(key, parallelism, { ex: POOL_MEMORY_SECONDS })
      .catch((err) => logFailure("the pool's count could not be kept in Redis", err));
    return parallelism;
  }
  // A split's parts are published at once: they share one read rather than each make their own.
  let reading: Promise<number> | undefined;
  return {
    partParallelism() {
      reading ??= read().finally(() => {
        reading = undefined;
      });
      return reading;
    },
  };
}
