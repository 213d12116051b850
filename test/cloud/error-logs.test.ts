import { Redis } from "@upstash/redis";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisRest } from "../../dev/cloud/redis-rest";
import { describeError } from "../../worker/services/error-log";
import { POSTGRES_ADMIN_URL } from "../support/postgres";

/**
 * What the Worker logs of a failed query or cache command (worker/services/error-log.ts, describeError):
 * why it failed, never the values it carried. The errors come from the real drivers: drizzle
 * over the machine's PostgreSQL, the official Upstash client over the REST stand-in.
 */
const SECRET = "whsec_c2VjcmV0LW9mLXRoZS13ZWJob29r";
const EMAIL = "someone@example.com";

describe("an error's log entry", () => {
  let pool: pg.Pool;
  let server: Awaited<ReturnType<typeof startRedisRest>>;
  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: POSTGRES_ADMIN_URL, max: 1 });
    server = await startRedisRest({ host: "127.0.0.1", redisUrl: "redis://127.0.0.1:6379" });
  });
  afterAll(async () => {
    await pool.end();
    await server.stop();
  });

  it("a failed query: the statement and the driver's reason, its parameters withheld, in the message and the stack", async () => {
    const err = await drizzle(pool)
      .execute(sql`update no_such_table set webhook_secret = ${SECRET}, email = ${EMAIL}`)
      .catch((e: unknown) => e);
    expect(String((err as Error).message)).toContain(SECRET);
    const logged = describeError(err);
    const text = JSON.stringify(logged);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(EMAIL);
    expect(logged.message).toBe(
      "Failed query: update no_such_table set webhook_secret = $1, email = $2\nparams: 2 withheld",
    );
    expect(logged.stack).toMatch(/^Error: Failed query: update no_such_table[\s\S]*params: 2 withheld\n\s+at /);
    expect(logged.cause).toMatchObject({ code: "42P01", message: 'relation "no_such_table" does not exist' });
  });

  it("a cache command the REST service refuses: its answer and the command's name, its arguments withheld", async () => {
    // Upstash puts the whole command in an error it answers with a 4xx or 5xx (a wrong token, its
    // request limit reached): here, a throttle's key, which holds the email signing in.
    const refusing = new Redis({ url: server.url, token: "not-the-token" });
    const key = `throttle:signin-email:1:${EMAIL}`;
    for (const failing of [() => refusing.incr(key), () => refusing.pipeline().incr(key).expire(key, 60).exec()]) {
      const err = await failing().catch((e: unknown) => e);
      expect(String((err as Error).message)).toContain(EMAIL);
      const logged = describeError(err);
      expect(JSON.stringify(logged)).not.toContain(EMAIL);
      expect(logged.message).toBe("Unauthorized, command was: incr (its arguments withheld)");
    }
  });
});
