import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { deliverWebhook, type WebhookTopic } from "../../lib/webhooks";
import { verifyQStash } from "./verify";

const attemptBody = z.object({ jobId: z.string().uuid(), event: z.literal("playable").optional() });

function parseAttempt(raw: string): { jobId: string; topic: WebhookTopic } | null {
  try {
    const parsed = attemptBody.safeParse(JSON.parse(raw));
    if (!parsed.success) return null;
    return { jobId: parsed.data.jobId, topic: parsed.data.event === "playable" ? "playable" : "finished" };
  } catch {
    return null;
  }
}

/**
 * QStash delivers each webhook attempt here (signed with Upstash-Signature over the raw body);
 * the attempt is made from here, and anything but a 2xx from the account's endpoint is
 * answered with a 502 so QStash retries.
 */
export const webhookDeliveries = new Hono<AppEnv>().post("/", verifyQStash, async (c) => {
  const attempt = parseAttempt(await c.req.text());
  // A signed message that can never succeed: QStash is told not to retry it.
  if (!attempt) throw ApiError.malformedDelivery("Expected {jobId}");
  const outcome = await deliverWebhook(c.get("services"), attempt.jobId, attempt.topic);
  if ("delivered" in outcome && !outcome.delivered) throw ApiError.webhookNotDelivered(outcome.reason);
  return c.json(outcome);
});
