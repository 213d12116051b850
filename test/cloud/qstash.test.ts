import { createServer, request, type IncomingHttpHeaders } from "node:http";
import { Client, Receiver } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readEmulatedMessage, startQStashEmulator } from "../../dev/cloud/qstash-emulator";

type Received = { body: string; headers: IncomingHttpHeaders; at: number };

/** A destination whose answer each test chooses; it records what arrives and when. */
async function destination(
  answer: (req: Received, n: number) => { status: number; delayMs?: number; headers?: Record<string, string> },
) {
  const received: Received[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const r = { body, headers: req.headers, at: Date.now() };
      received.push(r);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const { status, delayMs = 0, headers = {} } = answer(r, received.length);
      setTimeout(() => {
        inFlight -= 1;
        res.writeHead(status, headers).end();
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    received,
    maxInFlight: () => maxInFlight,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const until = (cond: () => boolean, timeoutMs = 10_000) =>
  vi.waitFor(() => expect(cond()).toBe(true), { timeout: timeoutMs, interval: 20 });

describe("QStash emulator, through the official @upstash/qstash Client and Receiver", () => {
  let emulator: Awaited<ReturnType<typeof startQStashEmulator>>;
  let client: Client;
  let receiver: Receiver;
  beforeAll(async () => {
    emulator = await startQStashEmulator({ host: "127.0.0.1", retryBaseMs: 50, maxRetryDelayMs: 200 });
    client = new Client({ baseUrl: emulator.url, token: emulator.token });
    receiver = new Receiver({ currentSigningKey: emulator.currentSigningKey, nextSigningKey: emulator.nextSigningKey });
  });
  afterAll(() => emulator.stop());

  /** Once a message is delivered, failed or cancelled, the emulator sends nothing more for it. */
  const settled = (messageId: string, state: string) =>
    vi.waitFor(async () => expect((await readEmulatedMessage(emulator, messageId)).state).toBe(state), {
      timeout: 10_000,
      interval: 20,
    });

  it("delivers a published message with a signature the real Receiver verifies, and forwarded headers", async () => {
    const dest = await destination(() => ({ status: 200 }));
    const { messageId } = await client.publishJSON({
      url: dest.url,
      body: { hello: "world" },
      headers: { "x-trace": "abc" },
    });
    expect(messageId).toMatch(/^msg_/);
    await until(() => dest.received.length === 1);
    const [delivery] = dest.received;
    expect(JSON.parse(delivery.body)).toEqual({ hello: "world" });
    expect(delivery.headers["x-trace"]).toBe("abc");
    expect(delivery.headers["upstash-message-id"]).toBe(messageId);
    expect(delivery.headers["upstash-retried"]).toBe("0");
    const signature = delivery.headers["upstash-signature"] as string;
    expect(await receiver.verify({ signature, body: delivery.body, url: dest.url })).toBe(true);
    await dest.close();
  });

  it("a forged or altered delivery is refused by the Receiver", async () => {
    const dest = await destination(() => ({ status: 200 }));
    await client.publishJSON({ url: dest.url, body: { amount: 1 } });
    await until(() => dest.received.length === 1);
    const signature = dest.received[0].headers["upstash-signature"] as string;
    await expect(receiver.verify({ signature, body: JSON.stringify({ amount: 1000 }) })).rejects.toThrow();
    await expect(
      receiver.verify({ signature, body: dest.received[0].body, url: "http://elsewhere/" }),
    ).rejects.toThrow();
    const stranger = new Receiver({ currentSigningKey: "sig_other", nextSigningKey: "sig_other2" });
    await expect(stranger.verify({ signature, body: dest.received[0].body })).rejects.toThrow();
    await dest.close();
  });

  it("retries failures with Upstash-Retried counting up, until the message's retries are spent", async () => {
    const dest = await destination(() => ({ status: 500 }));
    const { messageId } = await client.publishJSON({ url: dest.url, body: {}, retries: 2 });
    await until(() => dest.received.length === 3);
    await settled(messageId, "failed");
    expect(dest.received.map((r) => r.headers["upstash-retried"])).toEqual(["0", "1", "2"]);
    expect(dest.received[1].at - dest.received[0].at).toBeGreaterThanOrEqual(45);
    // Given up on, it is gone from QStash's API, as a delivered or cancelled one is.
    await expect(client.messages.get(messageId)).rejects.toMatchObject({ status: 404 });
    await dest.close();
  });

  it("waits before each retry what the message's retryDelay expression gives for retried, counting from 0", async () => {
    let answeredAt = 0;
    const dest = await destination(() => {
      answeredAt = Date.now();
      return { status: 503 };
    });
    // retried 0 and 1: no wait; retried 2: a minute, which the test sees scheduled, not waited for.
    const { messageId } = await client.publishJSON({
      url: dest.url,
      body: {},
      retries: 3,
      retryDelay: "max(0, 60000 * (retried - 1))",
    });
    await until(() => dest.received.length === 3);
    const waiting = await vi.waitFor(
      async () => {
        const message = await readEmulatedMessage(emulator, messageId);
        expect(message).toMatchObject({ state: "waiting", retried: 3 });
        return { message, seenAt: Date.now() };
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(waiting.message.retryDelay).toBe("max(0, 60000 * (retried - 1))");
    expect(waiting.message.notBefore).toBeGreaterThanOrEqual(answeredAt + 60_000);
    expect(waiting.message.notBefore).toBeLessThanOrEqual(waiting.seenAt + 60_000);
    expect(dest.received.map((r) => r.headers["upstash-retried"])).toEqual(["0", "1", "2"]);
    await client.messages.cancel(messageId);
    await dest.close();
  });

  it("refuses a retryDelay that is not one of QStash's expressions, and queues nothing", async () => {
    const dest = await destination(() => ({ status: 200 }));
    await expect(
      client.publishJSON({ url: dest.url, body: {}, retryDelay: "1000 * attempts", deduplicationId: "bad-delay" }),
    ).rejects.toThrow(/invalid retry delay: unknown name .+attempts/);
    expect(
      (await client.publishJSON({ url: dest.url, body: {}, deduplicationId: "bad-delay" })).deduplicated,
    ).toBeFalsy();
    await until(() => dest.received.length === 1);
    await dest.close();
  });

  it("stops retrying on 489 with Upstash-NonRetryable-Error", async () => {
    const dest = await destination(() => ({ status: 489, headers: { "Upstash-NonRetryable-Error": "true" } }));
    const { messageId } = await client.publishJSON({ url: dest.url, body: {}, retries: 3 });
    await until(() => dest.received.length === 1);
    await settled(messageId, "failed");
    expect(dest.received).toHaveLength(1);
    await dest.close();
  });

  it("a message whose retries are spent is reported to its failure callback, in QStash's callback body, signed and itself retried", async () => {
    const dest = await destination(() => ({ status: 503, headers: { "x-why": "busy" } }));
    // The callback's first delivery fails: it is retried like any message.
    const callback = await destination((_r, n) => ({ status: n === 1 ? 500 : 200 }));
    const body = { jobId: "job-1", firstAttempt: 0 };
    const { messageId } = await client.publishJSON({
      url: dest.url,
      body,
      retries: 2,
      failureCallback: callback.url,
      headers: { "x-trace": "abc" },
    });
    await until(() => callback.received.length === 2);
    expect(dest.received).toHaveLength(3);
    const [first, second] = callback.received;
    expect(second.body).toBe(first.body);
    expect(callback.received.map((r) => r.headers["upstash-retried"])).toEqual(["0", "1"]);
    expect(second.headers["content-type"]).toBe("application/json");
    expect(second.headers["upstash-message-id"]).not.toBe(messageId);
    const signature = second.headers["upstash-signature"] as string;
    expect(await receiver.verify({ signature, body: second.body, url: callback.url })).toBe(true);
    await expect(receiver.verify({ signature, body: second.body, url: dest.url })).rejects.toThrow();

    const report = JSON.parse(second.body);
    expect(report).toMatchObject({
      status: 503,
      retried: 2,
      maxRetries: 2,
      sourceMessageId: messageId,
      url: dest.url,
      method: "POST",
      dlqId: expect.any(String),
      notBefore: expect.stringMatching(/^\d+$/),
      createdAt: expect.stringMatching(/^\d+$/),
    });
    expect(report.header["x-why"]).toEqual(["busy"]);
    expect(report.sourceHeader).toMatchObject({ "x-trace": ["abc"], "Content-Type": ["application/json"] });
    expect(JSON.parse(Buffer.from(report.sourceBody, "base64").toString("utf8"))).toEqual(body);
    expect(Buffer.from(report.body, "base64").toString("utf8")).toBe("");
    await settled(messageId, "failed");
    await Promise.all([dest.close(), callback.close()]);
  });

  it("a failure callback reports a destination that never answered as status 0, and one answering 489 non-retryable at once", async () => {
    const callback = await destination(() => ({ status: 200 }));
    const unreachable = await client.publishJSON({
      url: "http://127.0.0.1:9/nothing",
      body: { n: 1 },
      retries: 1,
      failureCallback: callback.url,
    });
    const refusing = await destination(() => ({ status: 489, headers: { "Upstash-NonRetryable-Error": "true" } }));
    const refused = await client.publishJSON({
      url: refusing.url,
      body: { n: 2 },
      retries: 3,
      failureCallback: callback.url,
    });
    await until(() => callback.received.length === 2);
    const reports = new Map(callback.received.map((r) => [JSON.parse(r.body).sourceMessageId, JSON.parse(r.body)]));
    expect(reports.get(unreachable.messageId)).toMatchObject({ status: 0, retried: 1, maxRetries: 1 });
    expect(reports.get(refused.messageId)).toMatchObject({ status: 489, retried: 0, maxRetries: 3 });
    expect(refusing.received).toHaveLength(1);
    await Promise.all([refusing.close(), callback.close()]);
  });

  it("a delivered message calls no failure callback", async () => {
    const callback = await destination(() => ({ status: 200 }));
    const dest = await destination((_r, n) => ({ status: n === 1 ? 500 : 200 }));
    const { messageId } = await client.publishJSON({
      url: dest.url,
      body: {},
      retries: 2,
      failureCallback: callback.url,
    });
    await settled(messageId, "delivered");
    // Failing after it was delivered: this one's callback, had the first one's been sent, arrives after it.
    const failing = await client.publishJSON({
      url: "http://127.0.0.1:9/nothing",
      body: {},
      retries: 0,
      failureCallback: callback.url,
    });
    await until(() => callback.received.length >= 1);
    expect(callback.received.map((r) => JSON.parse(r.body).sourceMessageId)).toEqual([failing.messageId]);
    await Promise.all([dest.close(), callback.close()]);
  });

  it("flow control: five messages with parallelism 2 never have more than two in flight", async () => {
    const dest = await destination(() => ({ status: 200, delayMs: 150 }));
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        client.publishJSON({ url: dest.url, body: { i }, flowControl: { key: "encoder-test", parallelism: 2 } }),
      ),
    );
    await until(() => dest.received.length === 5);
    expect(dest.maxInFlight()).toBe(2);
    await dest.close();
  });

  it("a cancelled message waiting its turn is never delivered", async () => {
    const dest = await destination(() => ({ status: 200, delayMs: 300 }));
    const flow = { key: "cancel-test", parallelism: 1 };
    await client.publishJSON({ url: dest.url, body: { n: 1 }, flowControl: flow });
    const second = await client.publishJSON({ url: dest.url, body: { n: 2 }, flowControl: flow });
    expect(await client.messages.cancel(second.messageId)).toEqual({ cancelled: 1 });
    // One at a time, first in first out: once a third published after it has arrived, the second's turn has passed.
    await client.publishJSON({ url: dest.url, body: { n: 3 }, flowControl: flow });
    await until(() => dest.received.length === 2);
    expect(dest.received.map((r) => JSON.parse(r.body).n)).toEqual([1, 3]);
    await dest.close();
  });

  it("a publisher that goes away mid-body queues nothing, and its deduplication id stays free", async () => {
    const dest = await destination(() => ({ status: 200 }));
    await new Promise<void>((resolve) => {
      const cut = request(`${emulator.url}/v2/publish/${dest.url}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${emulator.token}`,
          "content-type": "application/json",
          "content-length": "100",
          "upstash-deduplication-id": "cut-short",
        },
      });
      cut.on("error", () => resolve());
      cut.on("close", () => resolve());
      cut.write('{"n":', () => cut.destroy());
    });
    // Until the emulator has seen the publisher go, a publish under the id may still count as its duplicate.
    const published = await vi.waitFor(
      async () => {
        const res = await client.publishJSON({ url: dest.url, body: { n: 2 }, deduplicationId: "cut-short" });
        expect(res.deduplicated).toBeFalsy();
        return res;
      },
      { timeout: 10_000, interval: 50 },
    );
    await settled(published.messageId, "delivered");
    expect(dest.received.map((r) => JSON.parse(r.body))).toEqual([{ n: 2 }]);
    await dest.close();
  });

  it("a publish under a deduplication id already used is accepted, answered with the first message's id, and never delivered", async () => {
    const dest = await destination(() => ({ status: 200 }));
    const first = await client.publishJSON({
      url: dest.url,
      body: { n: 1 },
      deduplicationId: "webhook-job-1-completed",
    });
    const [again, concurrent] = await Promise.all([
      client.publishJSON({ url: dest.url, body: { n: 2 }, deduplicationId: "webhook-job-1-completed" }),
      client.publishJSON({ url: dest.url, body: { n: 3 }, deduplicationId: "webhook-job-1-completed" }),
    ]);
    const other = await client.publishJSON({ url: dest.url, body: { n: 4 }, deduplicationId: "webhook-job-1-failed" });
    expect(first.deduplicated).toBeFalsy();
    expect(again).toMatchObject({ messageId: first.messageId, deduplicated: true });
    expect(concurrent).toMatchObject({ messageId: first.messageId, deduplicated: true });
    expect(other.messageId).not.toBe(first.messageId);
    await until(() => dest.received.length === 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(dest.received.map((r) => JSON.parse(r.body).n).sort()).toEqual([1, 4]);
    await dest.close();
  });

  it("a deduplication id stands for QStash's window only: published again after it, the message is enqueued", async () => {
    const short = await startQStashEmulator({ host: "127.0.0.1", deduplicationWindowMs: 300 });
    try {
      const publisher = new Client({ baseUrl: short.url, token: short.token });
      const dest = await destination(() => ({ status: 200 }));
      const first = await publisher.publishJSON({ url: dest.url, body: { n: 1 }, deduplicationId: "windowed" });
      expect(await publisher.publishJSON({ url: dest.url, body: { n: 2 }, deduplicationId: "windowed" })).toMatchObject(
        { messageId: first.messageId, deduplicated: true },
      );
      // The window is the emulator's to keep: published again until it has passed, each try deduplicated until then.
      const later = await vi.waitFor(
        async () => {
          const again = await publisher.publishJSON({ url: dest.url, body: { n: 3 }, deduplicationId: "windowed" });
          expect(again.deduplicated).toBeFalsy();
          return again;
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(later.messageId).not.toBe(first.messageId);
      await until(() => dest.received.length === 2);
      await dest.close();
    } finally {
      await short.stop();
    }
  });

  it("answers a request it cannot read with a 400 and goes on: a broken escape in the destination, retries that are not a count", async () => {
    const publish = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${emulator.url}/v2/publish/${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${emulator.token}`, "content-type": "application/json", ...headers },
        body: "{}",
      });
    expect((await publish("https://a.example/%E0%A4")).status).toBe(400);
    const retries = await publish("http://127.0.0.1:9/x", {
      "upstash-retries": "many",
      "upstash-deduplication-id": "bad-retries",
    });
    expect(retries.status).toBe(400);
    expect(await retries.json()).toEqual({ error: "invalid retries: many" });
    const dest = await destination(() => ({ status: 200 }));
    // The id of the refused publish was not taken, and the emulator still delivers.
    expect(
      (await client.publishJSON({ url: dest.url, body: { n: 1 }, deduplicationId: "bad-retries" })).deduplicated,
    ).toBeFalsy();
    await until(() => dest.received.length === 1);
    await dest.close();
  });

  it("a delivery unanswered past the response timeout counts as failed and is delivered again, as QStash's are", async () => {
    // A second to answer: a loaded machine can hold even an answer given at once past 300 ms.
    const impatient = await startQStashEmulator({ host: "127.0.0.1", retryBaseMs: 50, responseTimeoutMs: 1000 });
    try {
      const publisher = new Client({ baseUrl: impatient.url, token: impatient.token });
      // The first delivery is answered only after three seconds: the emulator has given up on it by then.
      const dest = await destination((_req, n) => ({ status: 200, delayMs: n === 1 ? 3000 : 0 }));
      const { messageId } = await publisher.publishJSON({ url: dest.url, body: { long: "encode" }, retries: 2 });
      await vi.waitFor(async () => expect((await readEmulatedMessage(impatient, messageId)).state).toBe("delivered"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(dest.received.map((r) => r.headers["upstash-retried"])).toEqual(["0", "1"]);
      expect(new Set(dest.received.map((r) => r.headers["upstash-message-id"]))).toEqual(new Set([messageId]));
      await dest.close();
    } finally {
      await impatient.stop();
    }
  });

  it("refuses a wrong token", async () => {
    const stranger = new Client({ baseUrl: emulator.url, token: "wrong", retry: false });
    await expect(stranger.publishJSON({ url: "http://127.0.0.1:9/x", body: {} })).rejects.toThrow();
  });
});
