import { Receiver } from "@upstash/qstash";
import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { deliverWebhook } from "../../lib/webhooks";

const attemptBody = z.object({ jobId: z.string().uuid() });

function parseAttempt(raw: string): string | null {
  try {
    const parsed = attemptBody.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data.jobId : null;
  } catch {
    return null;
  }
}

/**
 * QStash delivers each webhook attempt here (signed with Upstash-Signature over the raw body);
 * the attempt is made from here, and anything but a 2xx from the account's endpoint is
 * answered with a 502 so QStash retries.
 */
export const webhookDeliveries = new Hono<AppEnv>().post("/", async (c) => {
  const { env } = c.get("services");
  const raw = await c.req.text();
  const receiver = new Receiver({ currentSigningKey: env.QSTASH_CURRENT_SIGNING_KEY, nextSigningKey: env.QSTASH_NEXT_SIGNING_KEY });
  const signature = c.req.header("Upstash-Signature");
  const verified = signature !== undefined && (await receiver.verify({ signature, body: raw }).catch(() => false));
  if (!verified) throw ApiError.unauthorized("Invalid Upstash-Signature");

  const jobId = parseAttempt(raw);
  // A signed message that can never succeed: QStash is told not to retry it.
  if (!jobId) throw ApiError.malformedDelivery("Expected {jobId}");
  const outcome = await deliverWebhook(c.get("services"), jobId);
  if ("delivered" in outcome && !outcome.delivered) throw ApiError.webhookNotDelivered(outcome.reason);
  return c.json(outcome);
});
