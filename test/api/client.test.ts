import { createServer } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { ApiError, createVepClient, type Job, NetworkError, NotPlayableError, WaitTimeoutError } from "../../client";
import { usage } from "../../drizzle/schema";
import { quotaPeriod } from "../../domain/time";
import { admin, completeJob, internal, newAccount, SOURCE, stack } from "./harness";
import { jobsInEveryState } from "./job-states";
import { claimStream, reportSegments } from "./stream-reports";

const timeline = {
  version: "1.0" as const,
  timeline: { tracks: [{ type: "video" as const, clips: [{ id: "a", src: SOURCE, in: 0, out: 4, startTime: 0 }] }] },
};

async function clientFor(plan: Parameters<typeof newAccount>[0] = "free") {
  const account = await newAccount(plan);
  return { ...account, api: createVepClient({ baseUrl: stack.apiUrl, apiKey: account.apiKey }) };
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe("client: every operation against the running service", () => {
  it("creates, lists, reads, signs, downloads and cancels jobs", async () => {
    const { api, accountId } = await clientFor("pro");
    const created = await api.createJob({ inputUrl: SOURCE, preset: "mp4_264_720p", metadata: { orderId: 7 } });
    expect(created).toMatchObject({ status: "queued", preset: "mp4_264_720p", user: { plan: "Indie/Pro" } });
    const read = await api.getJob(created.id);
    expect(read.clientMetadata).toEqual({ orderId: 7 });
    const list = await api.listJobs({ status: "queued", limit: 5 });
    expect(list.jobs.map((j) => j.id)).toContain(created.id);

    await completeJob(created.id, accountId, "output bytes");
    const link = await api.getDownloadUrl(created.id);
    expect(new URL(link.downloadUrl).searchParams.get("X-Amz-Expires")).toBe(String(7 * 24 * 3600));
    expect(await (await api.fetchOutput(created.id)).text()).toBe("output bytes");

    const other = await api.createJob({ inputUrl: SOURCE, preset: "mp4_264_480p" });
    expect(await api.cancelJob(other.id)).toMatchObject({
      id: other.id,
      status: "cancelled",
      message: "Job cancelled successfully",
    });
  });

  it("validates and creates timeline jobs; lists presets with and without a key", async () => {
    const { api } = await clientFor("free");
    expect(await api.validateEdl(timeline)).toMatchObject({ valid: true, plan: { current: "free", canProcess: true } });
    const job = await api.createEdlJob({ edl: timeline, metadata: { name: "teaser" } });
    expect(job).toMatchObject({ type: "edl", status: "queued", stats: { clips: 1 } });
    expect((await api.listPresets()).meta.userPlan).toBe("free");
    const business = await clientFor("business");
    expect((await business.api.listPresets()).presets.every((p) => p.available)).toBe(true);
    expect((await createVepClient({ baseUrl: stack.apiUrl }).listPresets()).meta.totalPresets).toBe(23);
  });

  it("an Idempotency-Key makes a retried creation return the first job", async () => {
    const { api } = await clientFor();
    const idempotencyKey = crypto.randomUUID();
    const first = await api.createJob({ inputUrl: SOURCE, preset: "mp4_264_720p" }, { idempotencyKey });
    const again = await api.createJob({ inputUrl: SOURCE, preset: "mp4_264_720p" }, { idempotencyKey });
    expect(again.id).toBe(first.id);
    expect([first.replayed, again.replayed]).toEqual([false, true]);
    // Not part of the API's JSON: printing or storing the answer shows the body as sent.
    expect(JSON.parse(JSON.stringify(again))).not.toHaveProperty("replayed");
    const timelineKey = crypto.randomUUID();
    await api.createEdlJob({ edl: timeline }, { idempotencyKey: timelineKey });
    expect((await api.createEdlJob({ edl: timeline }, { idempotencyKey: timelineKey })).replayed).toBe(true);
    const conflict = await refusal(api.createJob({ inputUrl: SOURCE, preset: "mp4_264_480p" }, { idempotencyKey }));
    expect(conflict).toMatchObject({ status: 409, kind: "conflict", error: "Conflict", retryable: false });
  });
});

describe("client: errors parsed into typed classes that say whether a retry helps", () => {
  it("400s: validation details, an unknown preset, an invalid timeline, a job that cannot be cancelled", async () => {
    const { api } = await clientFor();
    const invalid = await refusal(api.createJob({ inputUrl: "/relative.mp4", preset: "mp4_264_720p" }));
    expect(invalid).toMatchObject({
      status: 400,
      kind: "bad-request",
      error: "Validation error",
      message: "Invalid request parameters",
      retryable: false,
    });
    expect(invalid.body).toMatchObject({ details: [{ field: "inputUrl", message: "Invalid input URL" }] });
    const unknown = await refusal(api.createJob({ inputUrl: SOURCE, preset: "mp4_999p" }));
    expect(unknown).toMatchObject({ error: "Invalid preset", kind: "bad-request" });
    const edl = await refusal(api.createEdlJob({ edl: { ...timeline, version: "2.0" as never } }));
    expect(edl.error).toBe("EDL validation failed");
    expect((edl.body as { errors: string[] }).errors.length).toBeGreaterThan(0);
    const job = await api.createJob({ inputUrl: SOURCE, preset: "mp4_264_720p" });
    await api.cancelJob(job.id);
    expect(await refusal(api.cancelJob(job.id))).toMatchObject({ status: 400, error: "Invalid operation" });
  });

  it("401 for a wrong key, 403 for a preset above the plan, 404 for an unknown job: none retryable", async () => {
    const wrongKey = createVepClient({ baseUrl: stack.apiUrl, apiKey: "spk_not-a-real-key" });
    expect(await refusal(wrongKey.listJobs())).toMatchObject({
      status: 401,
      kind: "unauthorized",
      error: "Unauthorized",
      retryable: false,
    });
    const { api } = await clientFor("free");
    const forbidden = await refusal(api.createJob({ inputUrl: SOURCE, preset: "hls_abr_264_standard" }));
    expect(forbidden).toMatchObject({ status: 403, kind: "forbidden", error: "PRESET_NOT_ALLOWED", retryable: false });
    expect(forbidden.body).toMatchObject({ requiredPlan: "pro", yourPlan: "free" });
    const missing = await refusal(api.getJob(crypto.randomUUID()));
    expect(missing).toMatchObject({ status: 404, kind: "not-found", error: "Not found", retryable: false });
  });

  it("download-url's bare {message} bodies: 404, 400 and 410 keep their message and have no error class", async () => {
    const { api, apiKey, accountId } = await clientFor("pro");
    const ids = await jobsInEveryState(apiKey, accountId);
    const unknown = await refusal(api.getDownloadUrl(crypto.randomUUID()));
    expect(unknown).toMatchObject({ status: 404, kind: "not-found", error: undefined, message: "Job not found" });
    const notReady = await refusal(api.getDownloadUrl(ids.queued));
    expect(notReady).toMatchObject({ status: 400, kind: "bad-request", error: undefined });
    expect(notReady.message).toMatch(/not completed/);
    const gone = await refusal(api.getDownloadUrl(ids.legacy));
    expect(gone).toMatchObject({ status: 410, kind: "gone", error: undefined, retryable: false });
    expect(gone.message).toMatch(/older storage layout/);
  });

  it("413 for a body over the operation's limit: payload-too-large, not retryable", async () => {
    const { api } = await clientFor();
    const bigJob = await refusal(
      api.createJob({ inputUrl: SOURCE, preset: "mp4_264_720p", metadata: { pad: "x".repeat(1024 * 1024) } }),
    );
    expect(bigJob).toMatchObject({
      status: 413,
      kind: "payload-too-large",
      error: "Payload too large",
      retryable: false,
    });
    expect(bigJob.message).toMatch(/1 MiB/);
    const bigTimeline = await refusal(
      api.createEdlJob({ edl: { ...timeline, metadata: { pad: "x".repeat(4 * 1024 * 1024) } } }),
    );
    expect(bigTimeline).toMatchObject({ status: 413, kind: "payload-too-large", retryable: false });
    expect(bigTimeline.message).toMatch(/4 MiB/);
  });

  it("429 is the monthly quota: not retryable, with the usage", async () => {
    const { api, accountId } = await clientFor("free");
    await admin.db.insert(usage).values({ accountId, period: quotaPeriod(new Date()), count: 10 });
    const quota = await refusal(api.createJob({ inputUrl: SOURCE, preset: "mp4_264_720p" }));
    expect(quota).toMatchObject({
      status: 429,
      kind: "quota-exceeded",
      error: "Usage limit exceeded",
      retryable: false,
    });
    expect(quota.body).toEqual(expect.objectContaining({ usage: { current: 10, limit: 10, plan: "Starter" } }));
  });

  it("no answer at all is a NetworkError, retryable", async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const err = await createVepClient({ baseUrl: `http://127.0.0.1:${closed}` })
      .listPresets()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ kind: "network", retryable: true });
  });
});

describe("client: waitForJob", () => {
  it("polls until the job is completed, reporting each read's progress", async () => {
    const { api, accountId } = await clientFor();
    const job = await api.createJob({ inputUrl: SOURCE, preset: "mp4_264_720p" });
    const seen: Job[] = [];
    const waiting = api.waitForJob(job.id, { intervalMs: 150, onProgress: (j) => seen.push(j) });
    await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    await internal(`/jobs/${job.id}/heartbeat`, { claim: 1, progress: 0.5 });
    const seenHalfway = () => seen.some((j) => j.status === "processing" && j.progress === 0.5);
    await vi.waitFor(() => expect(seenHalfway()).toBe(true), { timeout: 10_000, interval: 50 });
    await completeJob(job.id, accountId, undefined, 1);
    const done = await waiting;
    expect(done).toMatchObject({ id: job.id, status: "completed" });
    expect(seen.at(-1)?.status).toBe("completed");
    expect(seenHalfway()).toBe(true);
  });

  it("stops when its signal aborts, and returns failed and cancelled jobs as they are", async () => {
    const { api } = await clientFor();
    const job = await api.createJob({ inputUrl: SOURCE, preset: "mp4_264_720p" });
    const controller = new AbortController();
    // Aborted after its first read, while it waits for the next one.
    const abortAfterRead = () => queueMicrotask(() => controller.abort(new Error("gave up")));
    await expect(
      api.waitForJob(job.id, { intervalMs: 100, signal: controller.signal, onProgress: abortAfterRead }),
    ).rejects.toThrow("gave up");
    await api.cancelJob(job.id);
    expect((await api.waitForJob(job.id, { intervalMs: 100 })).status).toBe("cancelled");
  });
});

describe("client: waitForPlayable (docs/playback.md)", () => {
  it("resolves while the job is processing, once every rendition has its first segment, with a link that serves the stream", async () => {
    const { api } = await clientFor("free");
    const job = await api.createJob({ inputUrl: SOURCE, preset: "hls_abr_264_basic" });
    const seen: Job[] = [];
    const waiting = api.waitForPlayable(job.id, { intervalMs: 100, onProgress: (j) => seen.push(j) });
    const claim = await claimStream(job.id);
    await vi.waitFor(() => expect(seen.some((j) => j.status === "processing")).toBe(true), { interval: 50 });
    await reportSegments(job.id, claim, 0);
    const playable = await waiting;
    expect(playable).toMatchObject({ id: job.id, status: "processing" });
    expect(seen.filter((j) => j.playbackUrl !== null)).toHaveLength(1);
    const master = await fetch(playable.playbackUrl);
    expect(master.status).toBe(200);
    expect(await master.text()).toMatch(/^#EXTM3U[\s\S]*480p\/index\.m3u8/);
  });

  it("rejects with a NotPlayableError for a job that completes without a link, or is cancelled before it has one", async () => {
    const { api, accountId } = await clientFor("free");
    const mp4 = await api.createJob({ inputUrl: SOURCE, preset: "mp4_264_480p" });
    const waiting = api.waitForPlayable(mp4.id, { intervalMs: 100 }).catch((e: unknown) => e);
    await completeJob(mp4.id, accountId);
    const err = await waiting;
    expect(err).toBeInstanceOf(NotPlayableError);
    expect((err as NotPlayableError).job).toMatchObject({ id: mp4.id, status: "completed", playbackUrl: null });
    expect((err as Error).message).toMatch(/completed without a playback link \(preset mp4_264_480p\)/);

    const stream = await api.createJob({ inputUrl: SOURCE, preset: "hls_abr_264_basic" });
    await claimStream(stream.id);
    await api.cancelJob(stream.id);
    const cancelled = await api.waitForPlayable(stream.id, { intervalMs: 100 }).catch((e: unknown) => e);
    expect(cancelled).toBeInstanceOf(NotPlayableError);
    expect((cancelled as Error).message).toBe(`job ${stream.id} was cancelled, so it has no playback link`);
  });

  it("a job still waiting for its first segments: a WaitTimeoutError after timeoutMs, the job going on", async () => {
    const { api } = await clientFor("free");
    const job = await api.createJob({ inputUrl: SOURCE, preset: "hls_abr_264_basic" });
    const err = await api.waitForPlayable(job.id, { intervalMs: 100, timeoutMs: 500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect(err).toMatchObject({ jobId: job.id, job: { status: "queued" } });
    expect((await api.getJob(job.id)).status).toBe("queued");
  });
});
