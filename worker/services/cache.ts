import { Redis } from "@upstash/redis/cloudflare";
import type { Env } from "../env";
import { measured } from "./timing";

export function createCache(env: Env): Redis {
  const redis = new Redis({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN });
  redis.use((request, next) => measured("cache", () => next(request)));
  return redis;
}
