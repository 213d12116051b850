import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createVepClient, type Job, NotPlayableError, WaitTimeoutError } from "../../../client";

/**
 * waitForPlayable and the waits' timeout, against a real HTTP server that answers each job's
 * reads from a script: the answers in order, the last one again and again. A job without a script
 * is never answered.
 */
const PLAYBACK_URL = "http://127.0.0.1:8787/play/0f4e8c2a-5b1d-4c3e-9a7f-1e2d3c4b5a69/1790000000.sig/master.m3u8";

function job(id: string, fields: Partial<Job> = {}): Job {
  return {
    id,
    status: "processing",
    preset: "hls_abr_264_basic",
    inputUrl: "https://media.example.com/source.mp4",
    outputUrl: null,
    expiration: null,
    playbackUrl: null,
    duration: null,
    errorMessage: null,
    retryCount: 0,
    progress: 0,
    metadata: { createdAt: "2026-11-20T09:30:00.000Z", startedAt: null, completedAt: null, lastCheckedAt: null },
    clientMetadata: {},
    links: { self: `/api/v1/jobs/${id}` },
    ...fields,
  };
}

type Answer = { status: number; body: unknown };
const scripts = new Map<string, Answer[]>();
const reads = new Map<string, number>();
/** Every request the server held unanswered, noting when its client hung up. */
const held: { closed: boolean }[] = [];

let server: Server;
let baseUrl: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const id = new URL(req.url ?? "/", "http://x").pathname.split("/").at(-1) ?? "";
    reads.set(id, (reads.get(id) ?? 0) + 1);
    const script = scripts.get(id);
    if (!script) {
      const request = { closed: false };
      held.push(request);
      req.socket.on("close", () => (request.closed = true));
      return;
    }
    const answer = script.length > 1 ? (script.shift() as Answer) : script[0];
    res.writeHead(answer.status, { "Content-Type": "application/json" }).end(JSON.stringify(answer.body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** Each answer a read of the job `id` with these fields. */
const readsOf = (...fields: Partial<Job>[]) => {
  const id = crypto.randomUUID();
  scripts.set(
    id,
    fields.map((f) => ({ status: 200, body: job(id, f) })),
  );
  return id;
};

const client = (timeoutMs?: number) => createVepClient({ baseUrl, apiKey: "spk_test", timeoutMs });

describe("waitForPlayable", () => {
  it("resolves with the first read that carries the playback link, while the job is processing, and reads no more", async () => {
    const id = readsOf(
      { status: "queued", progress: null },
      { progress: 0.05 },
      { progress: 0.1, playbackUrl: PLAYBACK_URL },
      { progress: 0.2, playbackUrl: PLAYBACK_URL },
    );
    const seen: Job[] = [];
    const playable = await client().waitForPlayable(id, { intervalMs: 10, onProgress: (j) => seen.push(j) });
    expect(playable).toMatchObject({ id, status: "processing", progress: 0.1, playbackUrl: PLAYBACK_URL });
    expect(seen.map((j) => j.status)).toEqual(["queued", "processing", "processing"]);
    expect(reads.get(id)).toBe(3);
  });

  it("resolves with a job that completed with its link, when no read saw it processing", async () => {
    const id = readsOf({ status: "queued" }, { status: "completed", progress: 1, playbackUrl: PLAYBACK_URL });
    expect(await client().waitForPlayable(id, { intervalMs: 10 })).toMatchObject({
      status: "completed",
      playbackUrl: PLAYBACK_URL,
    });
  });

  it("retries the service's 5xx answers as waitForJob does", async () => {
    const id = crypto.randomUUID();
    const unavailable = { status: 503, body: { error: "Service unavailable", message: "try again" } };
    scripts.set(id, [unavailable, unavailable, { status: 200, body: job(id, { playbackUrl: PLAYBACK_URL }) }]);
    expect((await client().waitForPlayable(id, { intervalMs: 10 })).playbackUrl).toBe(PLAYBACK_URL);
    expect(reads.get(id)).toBe(3);
  });

  it.each([
    [
      { status: "failed", errorMessage: "Source could not be downloaded" },
      /failed, so it has no playback link: Source could not be downloaded$/,
    ],
    [{ status: "cancelled" }, /was cancelled, so it has no playback link$/],
    [
      { status: "completed", preset: "mp4_264_720p", progress: 1 },
      /completed without a playback link \(preset mp4_264_720p\): only the streaming presets \(hls_\*, dash_\*, cmaf_\*, live_\*\) give one$/,
    ],
  ] as const)("rejects with a NotPlayableError carrying the job once it ends %j", async (end, message) => {
    const id = readsOf({ status: "queued" }, end);
    const err = await client()
      .waitForPlayable(id, { intervalMs: 10 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotPlayableError);
    expect((err as NotPlayableError).message).toMatch(new RegExp(`^job ${id} `));
    expect((err as NotPlayableError).message).toMatch(message);
    expect((err as NotPlayableError).job).toMatchObject({ id, status: end.status });
  });

  it("a job that never turns playable: a WaitTimeoutError after timeoutMs, with the last read", async () => {
    const id = readsOf({ progress: 0.3 });
    const err = await client()
      .waitForPlayable(id, { intervalMs: 10, timeoutMs: 200 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect(err).toMatchObject({ jobId: id, timeoutMs: 200, job: { status: "processing" } });
    expect((err as Error).message).toBe(`job ${id} did not turn playable within 200 ms (it is processing); it goes on`);
  });

  it("the timeout ends a read under way that gets no answer, and closes its connection", async () => {
    // The call's own limit out of reach: only the wait's timeout can end the read.
    const before = held.length;
    const err = await client(3_600_000)
      .waitForPlayable(crypto.randomUUID(), { timeoutMs: 200 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect((err as WaitTimeoutError).job).toBeUndefined();
    expect(held.length).toBe(before + 1);
    await vi.waitFor(() => expect(held[before].closed).toBe(true));
  });

  it("an abort of the caller's signal rejects with its reason, not as a timeout", async () => {
    const id = readsOf({ progress: 0.1 });
    const stop = new AbortController();
    const waiting = client().waitForPlayable(id, {
      intervalMs: 10,
      timeoutMs: 60_000,
      signal: stop.signal,
      onProgress: () => stop.abort(new Error("stopped by the caller")),
    });
    await expect(waiting).rejects.toThrow("stopped by the caller");
  });

  it("refuses a timeoutMs that is not a number of milliseconds", async () => {
    const id = readsOf({ progress: 0.1 });
    for (const timeoutMs of [-1, Number.NaN, Number.POSITIVE_INFINITY])
      await expect(client().waitForPlayable(id, { timeoutMs }), String(timeoutMs)).rejects.toThrow(TypeError);
  });
});

describe("waitForJob's timeout", () => {
  it("a job that does not finish in time: a WaitTimeoutError saying so; one that does resolves as before", async () => {
    const running = readsOf({ progress: 0.5 });
    const err = await client()
      .waitForJob(running, { intervalMs: 10, timeoutMs: 200 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect((err as Error).message).toBe(`job ${running} did not finish within 200 ms (it is processing); it goes on`);
    const finishing = readsOf({ progress: 0.5 }, { status: "completed", progress: 1 });
    expect((await client().waitForJob(finishing, { intervalMs: 10, timeoutMs: 60_000 })).status).toBe("completed");
  });
});
