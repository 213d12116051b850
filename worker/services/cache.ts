import { Redis } from "@upstash/redis/cloudflare";
import type { Env } from "../env";
import { measured } from "./timing";

/**
 * Auto-pipelining off: it sends each command through a proxy into a new pipeline object, whose
 * hundreds of command methods are defined one by one (a cost docs/benchmarks.md#benchprofile
 * gives), to batch commands a request issues at once; the Worker never does, and where
 * several keys are wanted it asks for them in one command or an explicit pipeline.
 */
export function createCache(env: Env): Redis {
  const redis = new Redis({
    url: env.UPSTASH_REDIS_REST_URL,
    token: env.UPSTASH_REDIS_REST_TOKEN,
    enableAutoPipelining: false,
  });
  redis.use((request, next) => measured("cache", () => next(request)));
  return redis;
}
