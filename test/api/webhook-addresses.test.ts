import { eq } from "drizzle-orm";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { workerVars } from "../../dev/worker-vars";
import { accounts, users } from "../../drizzle/schema";
import { TEST_EVENTS_PER_ACCOUNT } from "../../worker/dashboard/lib/webhook";
import { deliverWebhook } from "../../worker/lib/webhooks";
import { openServices } from "../../worker/services";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { admin, completeJob, createJob, messageOf, newAccount, qstash, stack } from "./harness";
import { signedUp } from "./dashboard-session";

/**
 * Webhook URLs under the sources' address rules (domain/urls.ts): refused when set, and again
 * before each send. This stack runs with ALLOW_LOOPBACK_WEBHOOKS on (the development setting),
 * so its receivers on loopback are taken; the production setting is the in-process Worker below.
 */
const receiver = await startWebhookReceiver();
afterAll(() => receiver.stop());
afterEach(() => vi.restoreAllMocks());

const NOT_PUBLIC = [
  ["http://10.0.0.1:22/hook", "10.0.0.1"],
  ["http://169.254.169.254/latest/meta-data/", "169.254.169.254"],
  ["http://0xa9fea9fe/", "169.254.169.254"],
  ["http://0300.0250.0.1:6379/", "192.168.0.1"],
  ["http://[::ffff:10.0.0.1]:5432/", "[::ffff:a00:1]"],
  ["http://[fd00::1]/h", "[fd00::1]"],
  ["http://0.0.0.0:8787/h", "0.0.0.0"],
  ["http://metadata.google.internal/computeMetadata/v1/", "metadata.google.internal"],
  ["http://redis:6379/", "redis"],
  ["https://printer.local/h", "printer.local"],
] as const;

const accountOf = async (email: string) =>
  (await admin.db.select().from(users).where(eq(users.email, email)))[0].accountId;

/** Stores a webhook URL as if set under older rules: the form would refuse it now. */
const storeUrl = (accountId: string, url: string) =>
  admin.db.update(accounts).set({ webhookUrl: url }).where(eq(accounts.id, accountId));

describe("dashboard: a webhook URL must be public", () => {
  it("a private, reserved or internal address, in any spelling, or an internal name, is a form error, and nothing is saved", async () => {
    const { session, email } = await signedUp();
    for (const [url, host] of NOT_PUBLIC) {
      const res = await session.submit("/dashboard/webhook", "/dashboard/webhook", { url });
      expect(res.status, url).toBe(400);
      expect(res.html, url).toContain(
        `Webhooks go to public addresses only: ${host} is a private, reserved or internal`,
      );
      // The field keeps what was typed, to be corrected.
      expect(res.html, url).toContain(`value="${url}"`);
    }
    const [account] = await admin.db
      .select()
      .from(accounts)
      .where(eq(accounts.id, await accountOf(email)));
    expect(account.webhookUrl).toBeNull();

    // Under the development setting a receiver on loopback is taken, as the local stacks' are.
    const saved = await session.submit("/dashboard/webhook", "/dashboard/webhook", { url: receiver.url });
    expect(saved.status).toBe(303);
  });
});

describe("dashboard: the test event", () => {
  it("to a URL now refused, sends nothing and answers alike whatever the port: nothing tells closed from filtered", async () => {
    const { session, email } = await signedUp();
    const accountId = await accountOf(email);
    await session.submit("/dashboard/webhook", "/dashboard/webhook", { url: "https://hooks.example.com/x" });
    const answers = [];
    for (const url of ["http://10.0.0.1:22/", "http://10.0.0.1:9/", "http://10.0.0.1:6379/"]) {
      await storeUrl(accountId, url);
      const tested = await session.submit("/dashboard/webhook", "/dashboard/webhook/test");
      expect(tested.status, url).toBe(200);
      answers.push(/<span id="test-result">([^<]*)<\/span>/.exec(tested.html)?.[1]);
    }
    expect(new Set(answers)).toEqual(
      new Set([
        "Test event not sent: Webhooks go to public addresses only: 10.0.0.1 is a private, reserved or internal address or name.",
      ]),
    );
  });

  it("an endpoint that cannot be reached gets the message every unanswered attempt shares, without the error's detail", async () => {
    const { session } = await signedUp();
    await session.submit("/dashboard/webhook", "/dashboard/webhook", { url: "http://127.0.0.1:9/closed" });
    const tested = await session.submit("/dashboard/webhook", "/dashboard/webhook/test");
    expect(tested.html).toContain(
      "Test event not delivered: the endpoint could not be reached or did not answer within 15 s.",
    );
  });

  it(`is throttled per account: ${TEST_EVENTS_PER_ACCOUNT.limit} per 15 minutes, then a 429 with Retry-After that sends nothing; another account is not held back`, async () => {
    const { session } = await signedUp();
    await session.submit("/dashboard/webhook", "/dashboard/webhook", { url: `${receiver.url}/throttled` });
    const before = receiver.received.length;
    for (let i = 0; i < TEST_EVENTS_PER_ACCOUNT.limit; i++) {
      const tested = await session.submit("/dashboard/webhook", "/dashboard/webhook/test");
      expect(tested.html, `test event ${i + 1}`).toContain("Test event delivered");
    }
    expect(receiver.received.length - before).toBe(TEST_EVENTS_PER_ACCOUNT.limit);

    const refused = await session.submit("/dashboard/webhook", "/dashboard/webhook/test");
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(TEST_EVENTS_PER_ACCOUNT.windowSeconds);
    expect(refused.html).toMatch(/Too many test events\. Please wait and try again in \d+ minutes?\./);
    // Answered once the counter refused it: no request went out, then or later.
    expect(receiver.received.length - before).toBe(TEST_EVENTS_PER_ACCOUNT.limit);

    const other = await signedUp();
    await other.session.submit("/dashboard/webhook", "/dashboard/webhook", { url: `${receiver.url}/other` });
    expect((await other.session.submit("/dashboard/webhook", "/dashboard/webhook/test")).html).toContain(
      "Test event delivered",
    );
  });
});

describe("webhook deliveries: a URL refused at send time is dropped, not retried", () => {
  it("QStash's attempt for an account whose stored URL is private is answered 200 (dropped), and not tried again", async () => {
    const { apiKey, accountId } = await newAccount();
    await admin.setWebhook(accountId, receiver.url);
    const job = await createJob(apiKey);
    await completeJob(job.id, accountId);
    await storeUrl(accountId, "http://169.254.169.254/latest/meta-data/");

    const { messageId } = await qstash.publishJSON({
      url: `${stack.apiUrl}/internal/webhook-deliveries`,
      body: { jobId: job.id },
      retries: 3,
    });
    const message = await vi.waitFor(
      async () => {
        const current = await messageOf(messageId);
        expect(current.state).toBe("delivered");
        return current;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(message).toMatchObject({ state: "delivered", lastStatus: 200, retried: 0 });
  });

  it("under the production setting, a receiver on loopback gets nothing: the attempt is dropped with a logged reason", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    await completeJob(job.id, accountId);
    await admin.setWebhook(accountId, `${receiver.url}/production`);
    const vars = workerVars(
      stack.cloud,
      { publicUrl: stack.apiUrl, encoderUrl: stack.encoderUrl },
      stack.internalSecret,
    );
    const attemptsHere = () => receiver.received.filter((h) => JSON.parse(h.body).jobId === job.id);
    const alreadyHere = attemptsHere().length;
    const warned = vi.spyOn(console, "warn").mockImplementation(() => undefined);

    const production = openServices({ ...vars, ALLOW_LOOPBACK_WEBHOOKS: "false" });
    const reason =
      "the webhook URL is refused: Webhooks go to public addresses only: 127.0.0.1 is a loopback address or name.";
    expect(await deliverWebhook(production, job.id)).toEqual({ dropped: reason });
    // The attempt returned before any request could go out.
    expect(attemptsHere().length).toBe(alreadyHere);
    expect(warned.mock.calls.map(([line]) => JSON.parse(String(line)))).toEqual([
      {
        level: "warn",
        message: "webhook dropped: its URL is refused",
        jobId: job.id,
        reason: "Webhooks go to public addresses only: 127.0.0.1 is a loopback address or name.",
      },
    ]);

    // The same attempt under the development setting is sent.
    const development = openServices(vars);
    expect(await deliverWebhook(development, job.id)).toEqual({ delivered: true });
    expect(attemptsHere().length).toBe(alreadyHere + 1);
  });
});
