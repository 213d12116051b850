import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createVepClient, NetworkError, verifyWebhook, WebhookVerificationError } from "../../../client";

/** A service that takes every request and never answers: a hung connection, a stalled proxy. */
let silent: Server;
let url: string;
/** The requests it holds, each noting when its client hung up. */
const held: { closed: boolean }[] = [];
beforeAll(async () => {
  silent = createServer((req) => {
    const request = { closed: false };
    held.push(request);
    req.socket.on("close", () => (request.closed = true));
  });
  await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(async () => {
  silent.closeAllConnections();
  await new Promise((r) => silent.close(r));
});

describe("the client's calls", () => {
  it("waitForJob stops at once when its signal aborts during a read that gets no answer", async () => {
    // A call's own time limit out of reach: only the abort can end the read.
    const client = createVepClient({ baseUrl: url, apiKey: "spk_test", timeoutMs: 3_600_000 });
    const stop = new AbortController();
    const before = held.length;
    const waiting = client.waitForJob("0f4e8c2a-5b1d-4c3e-9a7f-1e2d3c4b5a69", { signal: stop.signal });
    const stopped = expect(waiting).rejects.toThrow("stopped by the caller");
    // Aborted while the read is out, unanswered.
    await vi.waitFor(() => expect(held.length).toBe(before + 1));
    stop.abort(new Error("stopped by the caller"));
    await stopped;
    // The read was given up, its connection closed, and no other was made.
    await vi.waitFor(() => expect(held[before].closed).toBe(true));
    expect(held.length).toBe(before + 1);
  });

  it("a call that gets no answer within timeoutMs fails as a retryable NetworkError", async () => {
    const client = createVepClient({ baseUrl: url, apiKey: "spk_test", timeoutMs: 300 });
    const err = await client.listJobs().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ kind: "network", retryable: true });
  });

  it("a base URL or a key that cannot make a request is refused when the client is made, the key never quoted", () => {
    expect(() => createVepClient({ baseUrl: "127.0.0.1:8787" })).toThrow(/must be an http\(s\) URL/);
    expect(() => createVepClient({ baseUrl: "ftp://example.com" })).toThrow(/must be an http\(s\) URL/);
    const mangled = "spk_secretpart\nspk_other";
    let message = "";
    try {
      createVepClient({ baseUrl: url, apiKey: mangled });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/spaces or control characters/);
    expect(message).not.toContain("secretpart");
    // An empty key (VEP_API_KEY set to nothing) is no key: only GET /presets works without one.
    expect(() => createVepClient({ baseUrl: url, apiKey: "" })).not.toThrow();
  });
});

describe("verifyWebhook", () => {
  it("a secret that is not base64 (an API key passed by mistake) is a WebhookVerificationError, not a decoding error", () => {
    for (const secret of ["spk_KHCpGffl9qOYD4PoSka43aTdgCunXB6rO8JzIlmkYFh", "whsec-abc"]) {
      const err = (() => {
        try {
          verifyWebhook(
            "{}",
            {
              "webhook-id": "msg_1",
              "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
              "webhook-signature": "v1,AAAA",
            },
            secret,
          );
        } catch (e) {
          return e;
        }
      })();
      expect(err, JSON.stringify(secret)).toBeInstanceOf(WebhookVerificationError);
      expect((err as Error).message).not.toContain(secret.trim());
      expect((err as Error).message).toMatch(/not a webhook secret/);
    }
  });

  it("the whsec_ prefix is optional: the base64 key alone verifies the same delivery", () => {
    const secret = `whsec_${Buffer.from("a webhook secret of 32 bytes....").toString("base64")}`;
    const body = JSON.stringify({ event: "job.completed", jobId: "0f4e8c2a-5b1d-4c3e-9a7f-1e2d3c4b5a69" });
    const sent = new Date();
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(Math.floor(sent.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign("msg_1", sent, body),
    };
    expect(verifyWebhook(body, headers, secret)).toMatchObject({ event: "job.completed" });
    expect(verifyWebhook(body, headers, secret.slice("whsec_".length))).toMatchObject({ event: "job.completed" });
  });
});
