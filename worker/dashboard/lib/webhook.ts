import { eq } from "drizzle-orm";
import { accounts } from "../../../drizzle/schema";
import { generateWebhookSecret } from "../../../domain/keys";
import { webhookUrlProblem as urlProblem } from "../../../domain/urls";
import type { Env } from "../../env";
import { postSignedWebhook, type SendOutcome, unsendableWebhookUrl } from "../../lib/webhooks";
import type { ThrottleRule } from "../auth/throttle";
import { forgetCachedKeys } from "./api-keys";
import type { KeyCache } from "../../lib/key-cache";
import type { AnyDatabase } from "../../services/db";

/**
 * Test events per account. Each is a request to an address the user chose, its outcome shown to
 * them: the cap keeps the button from serving as a scanner of other hosts' ports.
 */
export const TEST_EVENTS_PER_ACCOUNT: ThrottleRule = {
  name: "webhook-test:account",
  limit: 10,
  windowSeconds: 15 * 60,
};

/** A test event's outcome; `refused` when the URL may not be sent to, and nothing was. */
export type TestOutcome = SendOutcome | { refused: string };

/**
 * Why the admin CLI refuses a webhook URL (dev/admin/commands.ts). It knows no deployment's
 * ALLOW_LOOPBACK_WEBHOOKS, so loopback passes, as the local stacks' receivers need; a deployment
 * without the setting drops every delivery there (deliverWebhook).
 */
export const webhookUrlProblem = (url: string) => urlProblem(url, { allowLoopback: true });

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
 * verification can be tried before the first job finishes. A URL that may not be sent to (one
 * stored under older rules) gets no request: the same answer whatever listens there.
 */
export async function sendTestEvent(
  env: Pick<Env, "ALLOW_LOOPBACK_WEBHOOKS">,
  url: string,
  secret: string,
  accountId: string,
  now = new Date(),
): Promise<TestOutcome> {
  const refused = unsendableWebhookUrl(env, url);
  if (refused) return { refused };
  const id = `msg_test_${crypto.randomUUID()}`;
  const body = JSON.stringify({
    event: "test",
    accountId,
    message: "A test event sent from the dashboard.",
    sentAt: now.toISOString(),
  });
  return postSignedWebhook(url, secret, id, body, now);
}
