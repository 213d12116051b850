import { Webhook, WebhookVerificationError } from "standardwebhooks";
import type { WebhookEvent } from "./types";

/**
 * Verifies a webhook delivery (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`, signed with the account's `whsec_` secret) and returns its event. Pass the
 * body exactly as received, before any JSON parsing. The `whsec_` prefix is optional, as in
 * standardwebhooks itself: the base64 key alone is the same secret. Throws standardwebhooks'
 * WebhookVerificationError for a bad signature, a timestamp outside five minutes, or a secret
 * that is not base64 (an API key passed by mistake).
 */
export function verifyWebhook(
  body: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  secret: string,
): WebhookEvent {
  const flat: Record<string, string> = {};
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  for (const [name, value] of entries)
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  let webhook: Webhook;
  try {
    webhook = new Webhook(secret);
  } catch {
    // Not quoted: it is a secret, or an API key.
    throw new WebhookVerificationError(
      "The webhook secret is not a webhook secret: pass the whsec_ secret as it was given",
    );
  }
  return webhook.verify(body, flat) as WebhookEvent;
}

export { WebhookVerificationError };
