import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signatureOf, verifyInternal } from "../../../domain/internal-auth";
import { InternalApiError, JobGoneError, createInternalApi, type InternalCall } from "../../../encoder/internal-api";

/**
 * The encoder's client of the Worker's /internal API, against a server that checks the HMAC
 * signature as the Worker does and answers per path. Under /gateway it stands for a proxy that
 * serves the Worker under that base, which the Worker's router never sees.
 */
const SECRET = "internal-secret-for-tests";
const jobId = "5b0f3c1e-8d2a-4c1b-9e7f-0a1b2c3d4e5f";
let server: Server;
let base: string;
const seen: { path: string; body: unknown }[] = [];
const nonces = new Set<string>();
/** Answers scripted per test for /complete on the retrying job: a status, or "drop" to close the connection unanswered. */
let script: (number | "drop")[] = [];
const retryingJob = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a";

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const call = signatureOf(req.headers);
    req.url = req.url!.replace(/^\/gateway(?=\/)/, "");
    // As the Worker does (worker/routes/internal/verify.ts): the call it was signed for, each nonce taken once.
    const request = { method: req.method!, path: req.url, body: raw };
    const ok = (await verifyInternal(SECRET, request, call)) && !nonces.has(call.nonce!);
    if (!ok) return res.writeHead(401).end(JSON.stringify({ error: "Unauthorized" }));
    nonces.add(call.nonce!);
    const answer = (status: number, body: string) =>
      res.writeHead(status, { "content-type": "application/json" }).end(body);
    if (req.url === `/internal/jobs/${retryingJob}/complete`) {
      seen.push({ path: "/complete (retrying job)", body: JSON.parse(raw) });
      const next = script.shift() ?? 200;
      if (next === "drop") return req.socket.destroy();
      return answer(
        next,
        next === 200
          ? JSON.stringify({ status: "completed" })
          : JSON.stringify({ error: "Internal server error", requestId: "r-1" }),
      );
    }
    const path = req.url!.replace(`/internal/jobs/${jobId}`, "");
    seen.push({ path, body: JSON.parse(raw) });
    if (path === "/claim")
      return answer(200, JSON.stringify({ job: { id: jobId, attempt: 1, claim: 2, preset: "mp4_264_720p" } }));
    if (path === "/heartbeat") return answer(409, JSON.stringify({ status: "cancelled" }));
    if (path === "/complete") return answer(404, "{}");
    return answer(502, "<html>bad gateway</html>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe("internal API client", () => {
  const api = () => createInternalApi(base, SECRET, { retryForMs: 0 });

  it("sends signed JSON and returns the claimed job", async () => {
    const job = await api().claim(jobId, 1);
    expect(job).toMatchObject({ id: jobId, attempt: 1, claim: 2, preset: "mp4_264_720p" });
    expect(seen.at(-1)).toEqual({ path: "/claim", body: { dispatch: 1 } });
  });

  it("409 means the job left the state the encoder works in: JobGoneError with the status", async () => {
    const err = await api()
      .heartbeat(jobId, 2, { progress: 0.5 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(JobGoneError);
    expect(err.status).toBe("cancelled");
  });

  it("404 means the job is gone for good", async () => {
    const err = await api()
      .complete(jobId, 2, "k/out.mp4", 2)
      .catch((e) => e);
    expect(err).toBeInstanceOf(JobGoneError);
    expect(err.status).toBe("missing");
  });

  it("any other failure, with a body that is not JSON, is an error naming the path and status", async () => {
    await expect(api().fail(jobId, 2, { errorMessage: "x", retryable: true })).rejects.toThrow(
      `internal API /jobs/${jobId}/fail answered 502: {}`,
    );
  });

  it("signs the route as the Worker's router sees it, without the base API_INTERNAL_URL names", async () => {
    const behindProxy = createInternalApi(`${base}gateway/`, SECRET, { retryForMs: 0 });
    await expect(behindProxy.claim(jobId, 3)).resolves.toMatchObject({ id: jobId });
    expect(seen.at(-1)).toEqual({ path: "/claim", body: { dispatch: 3 } });
  });

  it("a wrong secret is refused by the Worker", async () => {
    await expect(createInternalApi(base, "another-secret-entirely", { retryForMs: 0 }).claim(jobId, 0)).rejects.toThrow(
      /answered 401/,
    );
  });
});

describe("internal API client › claims and reports are asked again while the Worker fails", () => {
  function retrying(retryForMs: number) {
    const retries: { call: InternalCall; reason: string; waitMs: number }[] = [];
    const client = createInternalApi(base, SECRET, {
      retryForMs,
      onRetry: (id, call, err, waitMs) => {
        expect(id).toBe(retryingJob);
        retries.push({ call, reason: String(err), waitMs });
      },
    });
    return { client, retries };
  }
  const completions = () => seen.filter((s) => s.path === "/complete (retrying job)");

  it("5xx answers and a dropped connection are asked again, each time freshly signed, until the Worker takes the report", async () => {
    // Two drops: the HTTP client itself sends a request once more when a pooled connection was dropped.
    script = [503, "drop", "drop", 500];
    const before = completions().length;
    const { client, retries } = retrying(30_000);
    await expect(client.complete(retryingJob, 1, "outputs/a/b/out.mp4", 2)).resolves.toEqual({ status: "completed" });
    expect(completions().length - before).toBe(5);
    expect(retries.every((r) => r.call === "complete")).toBe(true);
    expect(retries[0].reason).toMatch(/answered 503/);
    expect(retries[1].reason).toMatch(/socket hang up|ECONNRESET/);
    expect(retries.at(-1)!.reason).toMatch(/answered 500/);
    // Jittered doubling waits: the second wait is drawn from twice the first's range.
    expect(retries[0].waitMs).toBeGreaterThanOrEqual(250);
    expect(retries[0].waitMs).toBeLessThanOrEqual(500);
    expect(retries[1].waitMs).toBeGreaterThanOrEqual(500);
  });

  it("gives up once the retry window is spent, with the Worker's last answer", async () => {
    script = Array(20).fill(503);
    const { client, retries } = retrying(1_200);
    const before = completions().length;
    const err = await client.complete(retryingJob, 1, "outputs/a/b/out.mp4", 2).catch((e) => e);
    expect(err).toBeInstanceOf(InternalApiError);
    expect(err.status).toBe(503);
    expect(retries.length).toBeGreaterThanOrEqual(1);
    // Asked once and once after each wait, the waits within the window, and the Worker still failing when it stopped.
    expect(completions().length - before).toBe(retries.length + 1);
    expect(retries.reduce((sum, r) => sum + r.waitMs, 0)).toBeLessThanOrEqual(1_200);
    expect(script.length).toBeGreaterThan(0);
    script = [];
  });

  it("a refusal is final at once: 4xx is not asked again, and 409 is the job gone", async () => {
    script = [400];
    const { client, retries } = retrying(30_000);
    await expect(client.complete(retryingJob, 1, "outputs/a/b/out.mp4", 2)).rejects.toMatchObject({ status: 400 });
    script = [409];
    await expect(client.complete(retryingJob, 1, "outputs/a/b/out.mp4", 2)).rejects.toBeInstanceOf(JobGoneError);
    expect(retries).toEqual([]);
  });
});
