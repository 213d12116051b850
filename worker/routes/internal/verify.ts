import { Receiver } from "@upstash/qstash";
import { createMiddleware } from "hono/factory";
import { INTERNAL_SIGNATURE_HEADER, INTERNAL_TIMESTAMP_HEADER, verifyInternal } from "../../../domain/internal-auth";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { workerUrl } from "../../services/queue";

/** Only the encoder, holding INTERNAL_SECRET, may call /internal; checked on the raw body. */
export const verifyEncoder = createMiddleware<AppEnv>(async (c, next) => {
  const body = await c.req.text();
  const ok = await verifyInternal(
    c.get("services").env.INTERNAL_SECRET,
    body,
    c.req.header(INTERNAL_TIMESTAMP_HEADER),
    c.req.header(INTERNAL_SIGNATURE_HEADER),
  );
  if (!ok) throw ApiError.unauthorized("Invalid internal signature");
  await next();
});

/**
 * Only QStash may deliver to its routes: its Upstash-Signature over the raw body, with either
 * signing key, for this route. The signature names the URL the message was published to, the
 * route's `workerUrl` (services/queue.ts): a message signed for another
 * destination (an encoder delivery, say) replayed here is refused.
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
