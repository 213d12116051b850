import { Receiver } from "@upstash/qstash";
import { createMiddleware } from "hono/factory";
import { signatureOf, verifyInternal } from "../../../domain/internal-auth";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { describeError } from "../../services/error-log";
import { firstUseOfNonce } from "../../lib/internal-nonces";
import { workerUrl } from "../../services/queue";

/**
 * Only the encoder, holding INTERNAL_SECRET, may call /internal; checked on the method, the path
 * the router matched (`c.req.path`: a call signed for one route or job is refused on another)
 * and the raw body, and each signed call once: a nonce seen before is a replay. Without the
 * cache to ask, the call is refused with a 503 rather than let through unchecked: the encoder
 * asks again (its claims and reports, freshly signed) and the sweep requeues a job whose
 * heartbeats stopped, so an outage delays jobs but loses none, while letting calls through
 * would open the replay it guards.
 */
export const verifyEncoder = createMiddleware<AppEnv>(async (c, next) => {
  const { env, cache } = c.get("services");
  const call = signatureOf(c.req.header());
  const request = { method: c.req.method, path: c.req.path, body: await c.req.text() };
  if (!(await verifyInternal(env.INTERNAL_SECRET, request, call)) || !call.nonce)
    throw ApiError.unauthorized("Invalid internal signature");
  let first: boolean;
  try {
    first = await firstUseOfNonce(cache, call.nonce);
  } catch (err) {
    console.error(JSON.stringify({ level: "error", message: "internal nonce unchecked", error: describeError(err) }));
    throw ApiError.serviceUnavailable("The internal signature's nonce cannot be checked now; sign again and retry.");
  }
  if (!first) throw ApiError.unauthorized("Replayed internal signature");
  await next();
});

/**
 * Only QStash may deliver to its routes: its Upstash-Signature over the raw body, with either
 * signing key, for this route. The signature names the URL the message was published to, the
 * route's `workerUrl` (services/queue.ts): a message signed for another
 * destination (an encoder delivery, say) replayed here is refused. Its `jti` is not recorded:
 * QStash delivers at least once, so both routes already take a message twice as once (a webhook
 * under its one webhook-id, a failure callback moving only a job still on that message), and a
 * replay within the JWT's `exp` can do no more than QStash's own redelivery.
 */
export const verifyQStash = createMiddleware<AppEnv>(async (c, next) => {
  const { env } = c.get("services");
  const receiver = new Receiver({
    currentSigningKey: env.QSTASH_CURRENT_SIGNING_KEY,
    nextSigningKey: env.QSTASH_NEXT_SIGNING_KEY,
  });
  const signature = c.req.header("Upstash-Signature");
  const url = workerUrl(env, c.req.path);
  const verified =
    signature !== undefined && (await receiver.verify({ signature, body: await c.req.text(), url }).catch(() => false));
  if (!verified) throw ApiError.unauthorized("Invalid Upstash-Signature");
  await next();
});
