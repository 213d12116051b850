import { Webhook } from "standardwebhooks";
import type { WebhookEvent } from "./types";

/**
 * Verifies a webhook delivery (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`, signed with the account's `whsec_` secret) and returns its event. Pass the
 * body exactly as received, before any JSON parsing. Throws standardwebhooks'
 * WebhookVerificationError for a bad signature or a timestamp outside five minutes.
 */
export function verifyWebhook(body: string, headers: Headers | Record<string, string | string[] | undefined>, secret: string): WebhookEvent {
  const flat: Record<string, string> = {};
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  for (const [name, value] of entries) if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  return new Webhook(secret).verify(body, flat) as WebhookEvent;
}

export { WebhookVerificationError } from "standardwebhooks";
