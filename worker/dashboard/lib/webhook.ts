import { eq } from "drizzle-orm";
import { accounts } from "../../../drizzle/schema";
import { generateWebhookSecret } from "../../../domain/keys";
import { holdsCredentials, isAbsoluteHttpUrl } from "../../../domain/urls";
import { postSignedWebhook } from "../../lib/webhooks";
import { forgetCachedKeys } from "./api-keys";
import type { KeyCache } from "../../lib/key-cache";
import type { AnyDatabase } from "../../services/db";

export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** Why a webhook URL is refused, or null when it is acceptable. */
export function webhookUrlProblem(url: string): string | null {
  if (url.length > WEBHOOK_URL_MAX_LENGTH) return `The URL is longer than ${WEBHOOK_URL_MAX_LENGTH} characters.`;
  if (!isAbsoluteHttpUrl(url)) return "The webhook URL must be an absolute http:// or https:// URL.";
  // fetch refuses a URL with credentials, so every attempt would fail; a receiver checks the signature instead.
  if (holdsCredentials(url))
    return "The webhook URL must not hold a user name or password: deliveries cannot send them. Check the signature instead.";
  return null;
}

/**
 * Stores the account's webhook (URL null removes it, and its secret with it). Cached key
 * lookups carry the webhook URL, so they are dropped.
 */
export async function saveWebhook(
  db: AnyDatabase,
  cache: KeyCache | null,
  accountId: string,
  webhook: { url: string | null; secret: string | null },
) {
  await db
    .update(accounts)
    .set({ webhookUrl: webhook.url, webhookSecret: webhook.url ? webhook.secret : null })
    .where(eq(accounts.id, accountId));
  await forgetCachedKeys(db, cache, accountId);
  return webhook;
}

/** A new URL keeps the secret the receiver already has; the first URL gets a fresh one. */
export function setWebhookUrl(
  db: AnyDatabase,
  cache: KeyCache | null,
  accountId: string,
  url: string,
  currentSecret: string | null,
) {
  return saveWebhook(db, cache, accountId, { url, secret: currentSecret ?? generateWebhookSecret() });
}

export async function rotateWebhookSecret(db: AnyDatabase, cache: KeyCache | null, accountId: string, url: string) {
  const secret = generateWebhookSecret();
  await saveWebhook(db, cache, accountId, { url, secret });
  return { url, secret };
}

/**
 * A `test` event, signed with the account's secret like every real delivery, so a receiver's
 * verification can be tried before the first job finishes.
 */
export async function sendTestEvent(url: string, secret: string, accountId: string, now = new Date()) {
  const id = `msg_test_${crypto.randomUUID()}`;
  const body = JSON.stringify({
    event: "test",
    accountId,
    message: "A test event sent from the dashboard.",
    sentAt: now.toISOString(),
  });
  return postSignedWebhook(url, secret, id, body, now);
}
