import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@upstash/qstash";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../../../dev/cloud/free-port";
import { startQStashEmulator } from "../../../dev/cloud/qstash-emulator";
import { JobGoneError, type ClaimedJob, type InternalApi } from "../../../encoder/internal-api";
import type { PipelineDeps, RenderResult } from "../../../encoder/jobs/pipeline";
import { createEncoderServer } from "../../../encoder/server";
import type { Uploader } from "../../../encoder/upload/s3";
import { qstashSignature } from "../../support/qstash-signature";
import { microtasksDrained } from "../../support/barriers";
import { jobsOnly } from "../../support/jobs-only";

/**
 * The encoder's delivery server with real signed deliveries from the QStash emulator. Only the
 * encoder's own collaborators (the Worker's internal API, the renderer, the uploader) are
 * stand-ins, so the test can hold a render open and count what happens.
 */
const jobId = "0f4e8c2a-5b1d-4c3e-9a7f-1e2d3c4b5a69";
let emulator: Awaited<ReturnType<typeof startQStashEmulator>>;
let workRoot: string;

beforeAll(async () => {
  emulator = await startQStashEmulator({ host: "127.0.0.1", retryBaseMs: 50 });
  workRoot = await mkdtemp(join(tmpdir(), "delivery-"));
});
afterAll(async () => {
  await emulator.stop();
  await rm(workRoot, { recursive: true, force: true });
});

/** An Upstash-Signature as QStash makes it (the emulator's keys): what a redelivery of one message carries. */
const signedFor = (url: string, body: string) => qstashSignature(emulator.currentSigningKey, url, body);

/**
 * The URL QStash is told to deliver to, as the encoder's PUBLIC_URL names it: in production a
 * proxy's address (Fly's), not the one the server listens on, so the tests sign for it alone.
 */
const deliveryUrl = "https://encoder.example.com/deliveries/jobs";

/** The claim of a job's `dispatch`: each dispatch here is claimed once, and none is a retry at the source. */
const claimed = (id: string, dispatch: number): ClaimedJob => ({
  id,
  attempt: 0,
  claim: dispatch + 1,
  accountId: "acct",
  preset: "mp4_264_720p",
  inputUrl: "https://media.example.com/a.mp4",
  edl: null,
  plan: "free",
  maxSourceSeconds: 600,
});
const noUpload = { uploadFile: async () => 1, uploadStream: async () => 1 } as unknown as Uploader;
/** A rendered output, as a renderer hands it to the pipeline. */
async function outputIn(workDir: string): Promise<RenderResult> {
  const path = join(workDir, "out.mp4");
  await writeFile(path, "x");
  return { output: { kind: "file", path, fileName: "out.mp4", contentType: "video/mp4" }, duration: 1 };
}

/**
 * The Worker's internal API as the encoder meets it: every claim answered with the job (its
 * dispatch noted in `seen.claims`), every completion counted, `heartbeat` as given.
 */
function fakeWorker(heartbeat = async (): Promise<{ status: string }> => ({ status: "processing" })) {
  const seen = { claims: [] as number[], completions: 0 };
  const api = {
    claim: async (id: string, dispatch: number): Promise<ClaimedJob> => {
      seen.claims.push(dispatch);
      return claimed(id, dispatch);
    },
    heartbeat,
    complete: async () => {
      seen.completions += 1;
      return { status: "completed" };
    },
    fail: async () => ({ status: "failed" }),
  } as unknown as InternalApi;
  return { api, seen };
}

/** Runs `work` against `server` listening on a port of its own (`port`, or any), then closes it and its connections. */
async function serving(server: Server, work: (port: number) => Promise<void>, port = 0) {
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  try {
    await work((server.address() as AddressInfo).port);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

const signingKeys = () => ({ current: emulator.currentSigningKey, next: emulator.nextSigningKey });

async function until(what: string, check: () => boolean, timeoutMs = 10_000) {
  await vi.waitFor(() => expect(check(), `waiting for ${what}`).toBe(true), { timeout: timeoutMs, interval: 20 });
}

describe("encoder delivery server", () => {
  it("a redelivery of a job still encoding joins that encode: one claim, one render, one completion", async () => {
    let renders = 0;
    const lines: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const worker = fakeWorker();
    const deps: PipelineDeps = {
      api: worker.api,
      uploader: noUpload,
      render: jobsOnly(async (_job, ctx) => {
        renders += 1;
        await held;
        return outputIn(ctx.workDir);
      }),
      workRoot,
      heartbeatMs: 60_000,
      encoderName: "encoder-test",
      log: (line) => lines.push(line),
    };
    await serving(
      createEncoderServer(deps, { signingKeys: signingKeys(), deliveryUrl, concurrency: 2 }),
      async (port) => {
        const url = `http://127.0.0.1:${port}/deliveries/jobs`;
        // The same message delivered twice while the first encode runs, as QStash does after a
        // response timeout: signed as QStash signs, the second with Upstash-Retried 1.
        const body = JSON.stringify({ jobId, dispatch: 0 });
        const deliver = async (retried: number) =>
          fetch(url, {
            method: "POST",
            body,
            headers: {
              "Content-Type": "application/json",
              "Upstash-Message-Id": "msg_one",
              "Upstash-Retried": String(retried),
              "Upstash-Signature": await signedFor(deliveryUrl, body),
            },
          });
        const first = deliver(0);
        await until("the first delivery to be claimed", () => worker.seen.claims.length === 1);
        const second = deliver(1);
        await new Promise((r) => setTimeout(r, 200));
        release();
        expect((await Promise.all([first, second])).map((res) => res.status)).toEqual([200, 200]);
        expect({ claims: worker.seen.claims.length, renders, completions: worker.seen.completions }).toEqual({
          claims: 1,
          renders: 1,
          completions: 1,
        });
        expect(lines.map((l) => l.split(/\s+/).slice(0, 3).join(" "))).toEqual([
          `job ${jobId} claim`,
          `job ${jobId} upload`,
          `job ${jobId} completed`,
        ]);
      },
    );
  });

  it("another message for the job while it encodes (the sweep dispatched it again) waits for that encode to stop, then claims and encodes on its own", async () => {
    let renders = 0;
    let requeued = false;
    // The Worker took the job back from the first attempt (its heartbeat looked stale): 409 queued.
    const worker = fakeWorker(async () => {
      if (requeued && worker.seen.claims.length === 1) throw new JobGoneError("queued");
      return { status: "processing" };
    });
    const deps: PipelineDeps = {
      api: worker.api,
      uploader: noUpload,
      render: jobsOnly(async (job, ctx) => {
        renders += 1;
        // The first claim's encode runs until it is stopped.
        if (job.claim === 1)
          await new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
        return outputIn(ctx.workDir);
      }),
      workRoot,
      heartbeatMs: 50,
      encoderName: "encoder-test",
      log: () => undefined,
    };
    // QStash (the emulator) delivers to the URL it was given: here the server's own address.
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/deliveries/jobs`;
    await serving(
      createEncoderServer(deps, { signingKeys: signingKeys(), deliveryUrl: url, concurrency: 2 }),
      async () => {
        const qstash = new Client({ baseUrl: emulator.url, token: emulator.token });
        const first = (await qstash.publishJSON({ url, body: { jobId, dispatch: 0 }, retries: 0 })).messageId;
        await until("the first attempt to be claimed", () => worker.seen.claims.length === 1);
        requeued = true;
        const again = (await qstash.publishJSON({ url, body: { jobId, dispatch: 1 }, retries: 0 })).messageId;
        const states = () =>
          emulator
            .messages()
            .filter((m) => [first, again].includes(m.messageId))
            .map((m) => m.state);
        await until("both deliveries to be answered", () => states().every((state) => state === "delivered"));
        expect(worker.seen.claims).toEqual([0, 1]);
        expect({ renders, completions: worker.seen.completions }).toEqual({ renders: 2, completions: 1 });
      },
      port,
    );
  });

  it("takes a delivery only when its signature names the delivery URL: one signed for another destination, replayed here, is refused", async () => {
    const worker = fakeWorker();
    const lines: string[] = [];
    const deps: PipelineDeps = {
      api: worker.api,
      uploader: noUpload,
      render: jobsOnly(async (_job, ctx) => outputIn(ctx.workDir)),
      workRoot,
      heartbeatMs: 60_000,
      encoderName: "encoder-test",
      log: (line) => lines.push(line),
    };
    await serving(
      createEncoderServer(deps, { signingKeys: signingKeys(), deliveryUrl, concurrency: 2 }),
      async (port) => {
        const local = `http://127.0.0.1:${port}/deliveries/jobs`;
        const body = JSON.stringify({ jobId, dispatch: 0 });
        const deliver = async (signedUrl: string) =>
          (
            await fetch(local, {
              method: "POST",
              body,
              headers: {
                "Content-Type": "application/json",
                "Upstash-Signature": await signedFor(signedUrl, body),
                // Not covered by the signature: nothing of the claim may come from it.
                "Upstash-Retried": "99999",
              },
            })
          ).status;
        // The Worker's own QStash routes, the address the server listens on, another host's delivery route.
        for (const other of [
          "https://api.example.com/internal/webhook-deliveries",
          "https://api.example.com/internal/dispatch-failures",
          local,
          "https://encoder.example.org/deliveries/jobs",
        ]) {
          expect(await deliver(other), other).toBe(401);
        }
        expect(worker.seen.claims).toEqual([]);
        // Each refusal is logged with QStash's reason, which names the URL signed for and the one wanted.
        const refusals = lines.map((line) => JSON.parse(line) as { level: string; reason: string });
        expect(refusals.map((r) => r.level)).toEqual(["warn", "warn", "warn", "warn"]);
        expect(refusals[0].reason).toBe(
          `invalid subject: https://api.example.com/internal/webhook-deliveries, want: ${deliveryUrl}`,
        );
        expect(await deliver(deliveryUrl)).toBe(200);
        expect(worker.seen.claims).toEqual([0]);
      },
    );
  });
});

describe("the encoder's delivery route against a client that holds its connection", () => {
  it("a body still arriving at the deadline closes the connection before any work (a byte every few seconds held it for ever)", async () => {
    const worker = fakeWorker();
    const deps: PipelineDeps = {
      api: worker.api,
      uploader: noUpload,
      render: jobsOnly(async () => expect.unreachable("nothing is rendered")),
      workRoot,
      heartbeatMs: 60_000,
      encoderName: "encoder-test",
      log: () => undefined,
    };
    await serving(
      createEncoderServer(deps, { signingKeys: signingKeys(), deliveryUrl, concurrency: 2, bodyDeadlineMs: 300 }),
      async (port) => {
        const socket = connect(port, "127.0.0.1");
        const closed = new Promise<string>((resolve) => {
          let answer = "";
          socket.on("data", (chunk) => (answer += chunk));
          socket.on("close", () => resolve(answer));
        });
        // Closed while it still writes, the socket may end in ECONNRESET: the close is what counts.
        socket.on("error", () => undefined);
        socket.write(
          "POST /deliveries/jobs HTTP/1.1\r\nHost: encoder\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
        );
        const dripping = setInterval(() => socket.writable && socket.write(" "), 100);
        try {
          expect(await closed).toBe("");
        } finally {
          clearInterval(dripping);
        }
        expect(worker.seen.claims).toEqual([]);
        expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      },
    );
  });
});

describe("the encoder stopping (a deploy's SIGTERM)", () => {
  /** A server whose one delivery is claimed and holds its render until `release`. */
  async function holdingOneDelivery(
    work: (
      server: ReturnType<typeof createEncoderServer>,
      url: string,
      answer: Promise<Response>,
      release: () => void,
    ) => Promise<void>,
  ) {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const worker = fakeWorker();
    const deps: PipelineDeps = {
      api: worker.api,
      uploader: noUpload,
      render: jobsOnly(async (_job, ctx) => {
        await held;
        return outputIn(ctx.workDir);
      }),
      workRoot,
      heartbeatMs: 60_000,
      encoderName: "encoder-test",
      log: () => undefined,
    };
    const server = createEncoderServer(deps, { signingKeys: signingKeys(), deliveryUrl, concurrency: 2 });
    await serving(server, async (port) => {
      const url = `http://127.0.0.1:${port}/deliveries/jobs`;
      const body = JSON.stringify({ jobId, dispatch: 0 });
      const answer = fetch(url, {
        method: "POST",
        body,
        headers: { "Content-Type": "application/json", "Upstash-Signature": await signedFor(deliveryUrl, body) },
      });
      await until("the delivery to be claimed", () => worker.seen.claims.length === 1);
      try {
        await work(server, url, answer, release);
      } finally {
        release();
      }
    });
  }

  it("takes no new delivery, and waits for the running encode to be answered", async () => {
    await holdingOneDelivery(async (server, url, answer, release) => {
      let drained: boolean | undefined;
      const draining = server.drain(30_000).then((all) => (drained = all));
      // The port refusing a request shows the drain under way; what it does without waiting, it has done by then.
      await expect(fetch(url.replace("/deliveries/jobs", "/healthz"))).rejects.toThrow();
      await microtasksDrained();
      expect(drained).toBeUndefined();
      release();
      expect((await answer).status).toBe(200);
      await draining;
      expect(drained).toBe(true);
    });
  });

  it("gives up waiting when the grace is over, for the encoder to stop what still runs", async () => {
    await holdingOneDelivery(async (server, _url, answer, release) => {
      expect(await server.drain(200)).toBe(false);
      release();
      expect((await answer).status).toBe(200);
    });
  });
});
