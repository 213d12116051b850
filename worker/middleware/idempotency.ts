import type { Context, Next } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../context";
import { sha256Hex } from "../../domain/keys";
import { ApiError } from "../errors";
import { describeError } from "../services/error-log";
import { idempotencyConflict } from "../lib/refusals";
import { outlivingTheClient } from "../lib/wait-until";

/** How long a creation can be replayed under its Idempotency-Key. */
const TTL_SECONDS = 24 * 60 * 60;

/** What Redis holds under a creation's Idempotency-Key: the reservation, then the answer to replay. */
type IdempotencyRecord =
  | { state: "pending"; bodyHash: string }
  | { state: "done"; bodyHash: string; status: number; body: unknown };

/**
 * Optional `Idempotency-Key` on creations: a retried request (same key, same body) gets the
 * first response again instead of a second job and a second quota unit. The key is reserved
 * in Redis before the handler runs, so concurrent retries cannot both create; a failed
 * creation (Hono has already rendered its error by the time `next` returns) releases it so
 * the client can try again. All of it runs to its end even when the client goes away
 * (`outlivingTheClient`): a key reserved and never settled refuses every retry for a day.
 */
export const idempotent = createMiddleware<AppEnv>((c, next) => outlivingTheClient(c, idempotently(c, next)));

async function idempotently(c: Context<AppEnv>, next: Next): Promise<Response | undefined> {
  const key = c.req.header("Idempotency-Key");
  if (key === undefined) {
    await next();
    return;
  }
  if (key.length < 1 || key.length > 255) {
    throw ApiError.validation([{ field: "Idempotency-Key", message: "must be 1 to 255 characters" }]);
  }
  const { cache } = c.get("services");
  const entry = `idem:${c.get("caller").accountId}:${c.req.method}:${c.req.path}:${key}`;
  const bodyHash = await sha256Hex(await c.req.text());

  const reserved = await cache.set(entry, { state: "pending", bodyHash } satisfies IdempotencyRecord, {
    nx: true,
    ex: TTL_SECONDS,
  });
  if (reserved !== "OK") {
    const previous = await cache.get<IdempotencyRecord>(entry);
    if (previous?.bodyHash !== bodyHash) throw idempotencyConflict.otherBody();
    if (previous.state === "pending") throw idempotencyConflict.inProgress();
    c.header("Idempotent-Replayed", "true");
    return c.json(previous.body as object, previous.status as 201);
  }

  await next();
  const settled =
    c.res.status >= 200 && c.res.status < 300
      ? cache.set(
          entry,
          {
            state: "done",
            bodyHash,
            status: c.res.status,
            body: await c.res.clone().json(),
          } satisfies IdempotencyRecord,
          { ex: TTL_SECONDS },
        )
      : cache.del(entry);
  // The answer stands whatever becomes of its record: a 201 turned into a 500 would have the
  // client retry a job it has into a second one. A creation left pending answers a retry with
  // 409 until the entry expires, which creates nothing twice.
  await settled.catch((err) =>
    console.error(
      JSON.stringify({
        level: "error",
        msg: "idempotency: the creation's answer was not recorded; a retry under its key is refused as in progress",
        entry,
        error: describeError(err),
      }),
    ),
  );
}
