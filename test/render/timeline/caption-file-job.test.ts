import { createServer, type Server } from "node:http";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobFailure } from "../../../encoder/failure";
import type { ClaimedJob } from "../../../encoder/internal-api";
import { renderTimelineJob } from "../../../encoder/jobs/timeline-job";
import { type Frame, frameAt } from "../../support/frames";
import { flat } from "../../support/timeline-render";

let dir: string;
let server: Server;
let base: string;
const fetched = new Map<string, number>();
const FILES: Record<string, string> = {
  "subs.vtt": "WEBVTT\n\n00:00.300 --> 00:00.900\nONE\n\n00:01.300 --> 00:01.700\nTWO\n",
  "broken.srt": "1\n00:00:00,300 --> 00:00:00,900\nfine\n\n2\n00:00:01,300 -> soon\nbroken\n",
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "caption-job-"));
  await flat(join(dir, "blue.mp4"), "blue", 2, 440);
  server = createServer(async (req, res) => {
    const name = req.url!.slice(1);
    fetched.set(name, (fetched.get(name) ?? 0) + 1);
    const body = FILES[name] ?? (await readFile(join(dir, name)).catch(() => null));
    if (body) res.writeHead(200).end(body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

async function render(captionFile: string) {
  const job: ClaimedJob = {
    id: "00000000-0000-4000-8000-000000000002",
    attempt: 0,
    claim: 1,
    accountId: "acct",
    preset: "edl_custom",
    inputUrl: "",
    edl: {
      version: "1.1",
      output: { resolution: "160x120", fps: 25 },
      timeline: {
        tracks: [
          { type: "video", clips: [{ id: "bg", src: `${base}/blue.mp4`, in: 0, out: 2, startTime: 0 }] },
          {
            type: "caption",
            clips: [{ id: "subs", src: `${base}/${captionFile}`, fontSize: 20, fontFamily: "DejaVu Sans" }],
          },
        ],
      },
    },
    plan: "enterprise",
    maxSourceSeconds: 3600,
  };
  const workDir = await mkdtemp(join(dir, "job-"));
  const result = await renderTimelineJob(
    job,
    {
      workDir,
      signal: new AbortController().signal,
      onProgress: () => undefined,
      onDuration: () => undefined,
      log: () => undefined,
    },
    { allowLoopback: true, maxBytes: 50 * 1024 * 1024, timeoutMs: 20_000 },
  );
  return result.output.kind === "file" ? result.output.path : expect.unreachable("a file output");
}

/** Whether the frame holds white ink (the caption's text; the blue picture and the dark box have none). */
function hasInk(frame: Frame): boolean {
  for (let y = 0; y < frame.height; y++)
    for (let x = 0; x < frame.width; x++) if (Math.min(...frame.pixel(x, y)) > 200) return true;
  return false;
}

describe("1.1 caption track from a file: downloaded as an asset, parsed, drawn", () => {
  it("a WebVTT file's cues are drawn each over its interval; the file is fetched once", async () => {
    const output = await render("subs.vtt");
    expect(fetched.get("subs.vtt")).toBe(1);
    for (const t of [0.1, 1.1, 1.9]) expect(hasInk(await frameAt(output, t)), `at ${t} s`).toBe(false);
    for (const t of [0.5, 1.5]) expect(hasInk(await frameAt(output, t)), `at ${t} s`).toBe(true);
  });

  it("a malformed file fails the job, not retried, naming the clip and the line", async () => {
    const failure = JobFailure.of(
      await render("broken.srt").then(
        () => expect.unreachable("the render should fail"),
        (e) => e,
      ),
    );
    expect(failure).toMatchObject({ kind: "invalid-timeline", retryable: false });
    expect(failure.message).toMatch(/^Caption clip subs: line 6: /);
  });
});
