import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createVepClient, NetworkError } from "../../../client";

/**
 * The client against a real HTTP server that closes the connection of chosen requests without
 * answering, as a server does to a kept-alive connection it closes just as Node's fetch reuses
 * it; Node's fetch does not send such a request again itself.
 */
const JOB_ID = "0f4e8c2a-5b1d-4c3e-9a7f-1e2d3c4b5a69";

interface Seen {
  method: string;
  path: string;
  key: string | undefined;
}

let server: Server;
let baseUrl: string;
let seen: Seen[];
/** How many times each "METHOD path" has its connection closed before it is answered; "after": once, having read the request through. */
let closing: Map<string, number | "after">;

function answer(req: IncomingMessage): { status: number; body: unknown } {
  if (req.method === "POST") return { status: 201, body: { id: JOB_ID, status: "queued" } };
  return { status: 200, body: { id: JOB_ID, status: "processing" } };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const key = req.headers["idempotency-key"];
    const request = `${req.method} ${path}`;
    req.resume();
    req.on("end", () => {
      seen.push({ method: req.method ?? "", path, key: typeof key === "string" ? key : undefined });
      const left = closing.get(request);
      if (left === "after") {
        closing.delete(request);
        res.socket?.destroy();
        return;
      }
      if (typeof left === "number" && left > 0) {
        closing.set(request, left - 1);
        res.socket?.destroy();
        return;
      }
      if (path.endsWith("/never")) return;
      const { status, body } = answer(req);
      res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  seen = [];
  closing = new Map();
});

const client = (timeoutMs?: number) => createVepClient({ baseUrl, apiKey: "spk_test", timeoutMs });

describe("a connection closed before any answer (docs/client-and-cli.md#connections-closed-before-an-answer)", () => {
  it("a read is sent once more, and answered", async () => {
    closing.set(`GET /api/v1/jobs/${JOB_ID}`, 1);
    expect(await client().getJob(JOB_ID)).toMatchObject({ id: JOB_ID });
    expect(seen.map((s) => s.method)).toEqual(["GET", "GET"]);
  });

  it("only once: a read whose connection closes every time fails as a NetworkError after two", async () => {
    closing.set(`GET /api/v1/jobs/${JOB_ID}`, Number.POSITIVE_INFINITY);
    const err = await client()
      .getJob(JOB_ID)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({
      retryable: true,
      message: expect.stringMatching(/other side closed|ECONNRESET|EPIPE/),
    });
    expect(seen).toHaveLength(2);
  });

  it("a creation the server took before the connection closed is sent again under the same Idempotency-Key, made by the client when the caller gave none", async () => {
    closing.set("POST /api/v1/jobs", "after");
    const created = await client().createJob({ inputUrl: "https://example.com/a.mp4", preset: "mp4_264_720p" });
    expect(created).toMatchObject({ id: JOB_ID });
    expect(seen.map((s) => s.method)).toEqual(["POST", "POST"]);
    expect(seen[0].key).toMatch(/^[0-9a-f]{32}$/);
    expect(seen[1].key).toBe(seen[0].key);

    // Each creation its own key; the caller's key when given.
    seen = [];
    await client().createJob({ inputUrl: "https://example.com/a.mp4", preset: "mp4_264_720p" });
    await client().createEdlJob({ edl: { tracks: [] }, preset: "edl_custom" } as never, {
      idempotencyKey: "the-callers-key",
    });
    expect(seen[0].key).toMatch(/^[0-9a-f]{32}$/);
    expect(seen[0].key).not.toBe(seen[1].key);
    expect(seen[1].key).toBe("the-callers-key");
  });

  it("a cancel is not sent again: a second could answer otherwise than the first", async () => {
    closing.set(`DELETE /api/v1/jobs/${JOB_ID}`, 1);
    await expect(client().cancelJob(JOB_ID)).rejects.toBeInstanceOf(NetworkError);
    expect(seen).toHaveLength(1);
  });

  it("no answer within timeoutMs is not a closed connection: the call is not sent again", async () => {
    const err = await client(300)
      .getUpload("never")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(seen).toHaveLength(1);
  });
});
