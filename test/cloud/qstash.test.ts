import { createServer, type IncomingHttpHeaders } from "node:http";
import { Client, Receiver } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startQStashEmulator } from "../../dev/cloud/qstash-emulator";

type Received = { body: string; headers: IncomingHttpHeaders; at: number };

/** A destination whose answer each test chooses; it records what arrives and when. */
async function destination(answer: (req: Received, n: number) => { status: number; delayMs?: number; headers?: Record<string, string> }) {
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
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

const until = (cond: () => boolean, timeoutMs = 10_000) => vi.waitFor(() => expect(cond()).toBe(true), { timeout: timeoutMs, interval: 20 });

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
    vi.waitFor(async () => expect(((await client.messages.get(messageId)) as unknown as { state: string }).state).toBe(state), { timeout: 10_000, interval: 20 });

  it("delivers a published message with a signature the real Receiver verifies, and forwarded headers", async () => {
    const dest = await destination(() => ({ status: 200 }));
    const { messageId } = await client.publishJSON({ url: dest.url, body: { hello: "world" }, headers: { "x-trace": "abc" } });
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
    await expect(receiver.verify({ signature, body: dest.received[0].body, url: "http://elsewhere/" })).rejects.toThrow();
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
    const message = await client.messages.get(messageId);
    expect((message as unknown as { state: string }).state).toBe("failed");
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

  it("a publish under a deduplication id already used is accepted, answered with the first message's id, and never delivered", async () => {
    const dest = await destination(() => ({ status: 200 }));
    const first = await client.publishJSON({ url: dest.url, body: { n: 1 }, deduplicationId: "webhook-job-1-completed" });
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

  it("refuses a wrong token", async () => {
    const stranger = new Client({ baseUrl: emulator.url, token: "wrong", retry: false });
    await expect(stranger.publishJSON({ url: "http://127.0.0.1:9/x", body: {} })).rejects.toThrow();
  });
});
