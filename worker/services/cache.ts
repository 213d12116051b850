import { Redis } from "@upstash/redis/cloudflare";
import type { Env } from "../env";

export function createCache(env: Env): Redis {
  return new Redis({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN });
}
