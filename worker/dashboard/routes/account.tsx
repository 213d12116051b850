import { eq } from "drizzle-orm";
import { Hono, type Context } from "hono";
import { apiKeys } from "../../../drizzle/schema";
import { isUuid } from "../../../domain/ids";
import { PRESETS } from "../../../domain/presets/catalogue";
import { presentPreset } from "../../../domain/presets/view";
import { webhookUrlProblem } from "../../../domain/urls";
import { countAttempt } from "../auth/throttle";
import { me, type DashboardEnv } from "../context";
import { issueApiKey, KEY_NAME_MAX_LENGTH, listApiKeys, revokeApiKey } from "../lib/api-keys";
import { usageThisMonth } from "../lib/usage";
import {
  rotateWebhookSecret,
  saveWebhook,
  sendTestEvent,
  setWebhookUrl,
  TEST_EVENTS_PER_ACCOUNT,
} from "../lib/webhook";
import { KeyCreatedPage, KeysPage, RevokeKeyPage } from "../pages/keys";
import { OverviewPage } from "../pages/overview";
import { PlanPage } from "../pages/plan";
import { notFoundPage, renderPage } from "../pages/render";
import { WebhookPage, type WebhookPageProps } from "../pages/webhook";
import { paths } from "../paths";

type Ctx = Context<DashboardEnv>;

/** The key `id` of the signed-in account; another account's key is as unknown as a made-up id. */
async function ownKey(c: Ctx, id: string) {
  if (!isUuid(id)) return undefined;
  const keys = await listApiKeys(c.get("services").db, me(c).account.id);
  return keys.find((k) => k.id === id);
}

function usageOf(c: Ctx) {
  const { db, env } = c.get("services");
  const { account } = me(c);
  return usageThisMonth(db, env, account.id, account.plan);
}

function webhookPage(c: Ctx, extra: Partial<WebhookPageProps> = {}, status: 200 | 400 | 429 = 200) {
  const { account, csrfToken } = me(c);
  const props: WebhookPageProps = {
    csrf: csrfToken,
    url: account.webhookUrl,
    hasSecret: Boolean(account.webhookSecret),
    ...extra,
  };
  return renderPage(c, { title: "Webhook", body: <WebhookPage {...props} /> }, status);
}

const formText = async (c: Ctx, field: string) => {
  const value = (await c.req.parseBody())[field];
  return typeof value === "string" ? value.trim() : "";
};

export const accountRoutes = new Hono<DashboardEnv>()
  .get("/", async (c) => {
    const { account } = me(c);
    const keys = await listApiKeys(c.get("services").db, account.id);
    const apiBase = `${new URL(c.req.url).origin}/api/v1`;
    const body = (
      <OverviewPage
        plan={account.plan}
        usage={await usageOf(c)}
        activeKeys={keys.filter((k) => !k.revokedAt).length}
        webhookUrl={account.webhookUrl}
        apiBase={apiBase}
      />
    );
    return renderPage(c, { title: "Overview", body });
  })
  .get("/plan", async (c) => {
    const { plan } = me(c).account;
    const presets = PRESETS.map((p) => presentPreset(p, plan));
    return renderPage(c, {
      title: "Plan & presets",
      body: <PlanPage plan={plan} usage={await usageOf(c)} presets={presets} />,
    });
  })
  .get("/keys", async (c) => {
    const { account, csrfToken } = me(c);
    const keys = await listApiKeys(c.get("services").db, account.id);
    const revoked = c.req.query("revoked");
    const notice = revoked && /^[A-Za-z0-9]{4}$/.test(revoked) ? `Key …${revoked} revoked.` : undefined;
    return renderPage(c, { title: "API keys", body: <KeysPage keys={keys} csrf={csrfToken} notice={notice} /> });
  })
  .post("/keys", async (c) => {
    const { account, csrfToken } = me(c);
    const { db } = c.get("services");
    const name = await formText(c, "name");
    if (!name || name.length > KEY_NAME_MAX_LENGTH) {
      const keys = await listApiKeys(db, account.id);
      const errors = [`Name the key (1 to ${KEY_NAME_MAX_LENGTH} characters), so you can tell it apart later.`];
      return renderPage(c, { title: "API keys", body: <KeysPage keys={keys} csrf={csrfToken} errors={errors} /> }, 400);
    }
    const { apiKey } = await issueApiKey(db, account.id, { name });
    return renderPage(c, { title: "API key created", body: <KeyCreatedPage name={name} apiKey={apiKey} /> }, 201);
  })
  .get("/keys/:id/revoke", async (c) => {
    const key = await ownKey(c, c.req.param("id"));
    if (!key || key.revokedAt) return notFoundPage(c, "Active key");
    return renderPage(c, { title: "Revoke key", body: <RevokeKeyPage target={key} csrf={me(c).csrfToken} /> });
  })
  .post("/keys/:id/revoke", async (c) => {
    const id = c.req.param("id");
    if (!isUuid(id)) return notFoundPage(c, "Active key");
    const { db, cache } = c.get("services");
    const revoked = await revokeApiKey(db, cache, eq(apiKeys.id, id), eq(apiKeys.accountId, me(c).account.id));
    if (!revoked) return notFoundPage(c, "Active key");
    return c.redirect(`${paths.keys}?revoked=${revoked.last4}`, 303);
  })
  .get("/webhook", (c) => webhookPage(c, c.req.query("saved") ? { notice: "Webhook saved." } : {}))
  .post("/webhook", async (c) => {
    const { account } = me(c);
    const { db, cache, env } = c.get("services");
    const url = await formText(c, "url");
    if (!url) {
      await saveWebhook(db, cache, account.id, { url: null, secret: null });
      return c.redirect(`${paths.webhook}?saved=1`, 303);
    }
    const problem = webhookUrlProblem(url, { allowLoopback: env.ALLOW_LOOPBACK_WEBHOOKS });
    if (problem) return webhookPage(c, { errors: [problem], draftUrl: url }, 400);
    await setWebhookUrl(db, cache, account.id, url, account.webhookSecret);
    return c.redirect(`${paths.webhook}?saved=1`, 303);
  })
  .post("/webhook/reveal", (c) => webhookPage(c, { secret: me(c).account.webhookSecret ?? undefined }))
  .post("/webhook/rotate", async (c) => {
    const { account } = me(c);
    if (!account.webhookUrl) return c.redirect(paths.webhook, 303);
    const { db, cache } = c.get("services");
    const { secret } = await rotateWebhookSecret(db, cache, account.id, account.webhookUrl);
    return webhookPage(c, {
      secret,
      hasSecret: true,
      notice: "Secret rotated. Give your receiver the new one: deliveries are signed with it from now on.",
    });
  })
  .post("/webhook/test", async (c) => {
    const { account } = me(c);
    if (!account.webhookUrl || !account.webhookSecret) return c.redirect(paths.webhook, 303);
    const { cache, env } = c.get("services");
    const verdict = await countAttempt(cache, TEST_EVENTS_PER_ACCOUNT, account.id);
    if (!verdict.allowed) {
      c.header("Retry-After", String(verdict.retryAfterSeconds));
      return webhookPage(c, { testThrottledFor: verdict.retryAfterSeconds }, 429);
    }
    const test = await sendTestEvent(env, account.webhookUrl, account.webhookSecret, account.id);
    return webhookPage(c, { test });
  });
