import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../../dev/cloud/free-port";
import { PROJECT_ROOT } from "../../dev/state";
import { qstashSignature } from "../support/qstash-signature";

/**
 * The encoder process (encoder/main.ts) told to stop, as Fly tells it on a deploy, while it
 * downloads a job's source. The Worker's internal API and the source are this test's servers: the
 * source sends its headers and holds the body until the test lets it end.
 */
const jobId = "3c1f6a2e-8d4b-4f7a-9e2c-5b6d7e8f9a01";
const signingKey = "current-signing-key";
let work: string;
let apiUrl: string;
let sourceUrl: string;
const reports: string[] = [];
/** The source's open response, once the encoder has asked for it. */
let source: ServerResponse | undefined;
const servers: ReturnType<typeof createServer>[] = [];
let encoder: ChildProcess | undefined;

async function listen(server: ReturnType<typeof createServer>): Promise<string> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "encoder-shutdown-"));
  apiUrl = await listen(
    createServer((req, res) => {
      const call = req.url!.split("/").pop()!;
      reports.push(call);
      const job = {
        id: jobId,
        attempt: 0,
        claim: 1,
        accountId: "acct",
        preset: "mp4_264_720p",
        inputUrl: sourceUrl,
        edl: null,
        plan: "free",
        maxSourceSeconds: 600,
      };
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify(call === "claim" ? { job } : { status: call === "fail" ? "failed" : "processing" }));
    }),
  );
  const sourceServer = createServer((_req, res) => {
    source = res.writeHead(200, { "content-type": "video/mp4" });
    source.write("not a video");
  });
  sourceUrl = `${await listen(sourceServer)}/source.mp4`;
});
afterEach(() => {
  encoder?.kill("SIGKILL");
  source = undefined;
  reports.length = 0;
});
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  await rm(work, { recursive: true, force: true });
});

/** Starts the encoder, delivers the job to it, and waits until its download has begun. */
async function encoderDownloading() {
  const port = await freePort();
  const lines: string[] = [];
  const child = spawn(process.execPath, ["--import", "tsx", "encoder/main.ts"], {
    cwd: PROJECT_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: "127.0.0.1",
      API_INTERNAL_URL: apiUrl,
      INTERNAL_SECRET: "a-secret-of-sixteen-or-more",
      QSTASH_CURRENT_SIGNING_KEY: signingKey,
      QSTASH_NEXT_SIGNING_KEY: "next-signing-key",
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      S3_ENDPOINT: "http://127.0.0.1:9/",
      S3_BUCKET: "outputs",
      S3_ACCESS_KEY_ID: "key",
      S3_SECRET_ACCESS_KEY: "secret",
      WORK_DIR: work,
      ALLOW_LOOPBACK_SOURCES: "true",
      SHUTDOWN_GRACE_MS: "60000",
    },
  });
  encoder = child;
  child.stdout!.on("data", (chunk: Buffer) => lines.push(...chunk.toString().split("\n")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  await vi.waitFor(() => expect(lines.some((l) => l.includes("encoder listening"))).toBe(true), {
    timeout: 30_000,
    interval: 50,
  });
  const url = `http://127.0.0.1:${port}/deliveries/jobs`;
  const body = JSON.stringify({ jobId, dispatch: 0 });
  const headers = {
    "content-type": "application/json",
    "upstash-signature": await qstashSignature(signingKey, url, body),
  };
  /** The delivery's status, or "no answer" when its connection closed without one. */
  const answer = fetch(url, { method: "POST", body, headers }).then(
    (res) => res.status,
    () => "no answer",
  );
  await vi.waitFor(() => expect(source).toBeDefined(), { timeout: 10_000, interval: 20 });
  return { child, lines, exited, answer, port };
}

describe("the encoder told to stop (SIGTERM) with SHUTDOWN_GRACE_MS", () => {
  it("stops taking deliveries, lets the running job finish and answers it, then exits", async () => {
    const { child, lines, exited, answer, port } = await encoderDownloading();
    child.kill("SIGTERM");
    await vi.waitFor(() => expect(lines.some((l) => l.includes("stopping: running encodes may finish"))).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    expect(child.exitCode).toBeNull();
    // The source ends: it is not a video, so the attempt fails, and that is reported and answered
    // (200: the Worker dispatches the retry).
    source!.end();
    expect(await answer).toBe(200);
    expect(await exited).toBe(0);
    expect(reports).toEqual(expect.arrayContaining(["claim", "fail"]));
    expect(lines.some((l) => l.includes("every running encode was answered"))).toBe(true);
  });

  it("a second signal stops it at once, the running job left for QStash to deliver again", async () => {
    const { child, lines, exited, answer } = await encoderDownloading();
    child.kill("SIGTERM");
    await vi.waitFor(() => expect(lines.some((l) => l.includes("stopping"))).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(await answer).toBe("no answer");
    expect(reports).toEqual(["claim"]);
  });
});
