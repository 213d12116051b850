import { createServer, type Server } from "node:http";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { ClaimedJob } from "../../../encoder/internal-api";
import { JobFailure } from "../../../encoder/failure";
import { renderTimelineJob } from "../../../encoder/jobs/timeline-job";
import { ffmpeg, makeSource } from "../../support/media";

let dir: string;
let server: Server;
let base: string;
/** Requests per path, to see which assets the renderer fetched and how often. */
const fetched = new Map<string, number>();
/** Requests under /held/ being answered now, and the most at once. */
const held = { now: 0, most: 0 };
/** Whether the client has let go of the connection of the request for `slow.mp4`, which never ends. */
let slowClosed = false;

const policy = { allowLoopback: true, maxBytes: 50 * 1024 * 1024, timeoutMs: 20_000 };
const url = (name: string) => `${base}/${name}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "timeline-job-"));
  await makeSource(join(dir, "clip.mp4"), { seconds: 1, width: 160, height: 120, fps: 25 });
  await makeSource(join(dir, "silent.mp4"), { seconds: 1, width: 160, height: 120, fps: 25, audio: false });
  // PNG frames in MOV: a video source and a PNG image to the probes, so one URL can be both.
  await ffmpeg([
    "-f",
    "lavfi",
    "-i",
    "testsrc2=size=32x32:rate=25:duration=1",
    "-c:v",
    "png",
    join(dir, "png-frames.mov"),
  ]);
  await ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=32x32", "-frames:v", "1", join(dir, "logo.png")]);
  const manifest = (target: string) =>
    `<!-- ${"x".repeat(9000)} -->\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT1S" minBufferTime="PT1S" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011">` +
    `<Period><AdaptationSet mimeType="video/mp4"><Representation id="1" bandwidth="1000" width="160" height="120" codecs="avc1.42c00d">` +
    `<BaseURL>${target}</BaseURL></Representation></AdaptationSet></Period></MPD>\n`;
  await writeFile(join(dir, "padded.mpd"), manifest(join(dir, "clip.mp4")));
  server = createServer(async (req, res) => {
    let name = req.url!.slice(1);
    fetched.set(name, (fetched.get(name) ?? 0) + 1);
    if (name.startsWith("held/")) {
      // Held a moment, to see how many the renderer fetches at once; then the file before the query.
      held.now += 1;
      held.most = Math.max(held.most, held.now);
      await new Promise((r) => setTimeout(r, 150));
      held.now -= 1;
      name = name.slice("held/".length).replace(/\?.*$/, "");
    }
    if (name === "slow.mp4") {
      req.socket.once("close", () => (slowClosed = true));
      res.writeHead(200, { "content-length": 10_000_000 }).write(Buffer.alloc(1000));
      return;
    }
    const body = await readFile(join(dir, name)).catch(() => null);
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
beforeEach(() => {
  fetched.clear();
  slowClosed = false;
});

async function render(tracks: unknown[], downloads = policy) {
  const job: ClaimedJob = {
    id: "00000000-0000-4000-8000-000000000001",
    attempt: 0,
    claim: 1,
    accountId: "acct",
    preset: "edl_custom",
    inputUrl: "",
    edl: { version: "1.0", output: { resolution: "160x120", fps: 25 }, timeline: { tracks } },
    plan: "enterprise",
    maxSourceSeconds: 3600,
  };
  const workDir = await mkdtemp(join(dir, "job-"));
  return renderTimelineJob(
    job,
    {
      workDir,
      signal: new AbortController().signal,
      onProgress: () => undefined,
      onDuration: () => undefined,
      log: () => undefined,
    },
    downloads,
  );
}

/** The failure as the job shows it: not retried, naming the clip, with no server path. */
async function failureOf(promise: Promise<unknown>) {
  const failure = JobFailure.of(
    await promise.then(
      () => expect.unreachable("the render should fail"),
      (e) => e,
    ),
  );
  expect(failure.message).not.toContain(dir);
  expect(failure.message).not.toContain("/tmp");
  return failure;
}

const video = (clips: unknown[]) => ({ type: "video", clips });

describe("timeline assets are refused when FFmpeg reads them as a playlist or manifest", () => {
  it("a video clip whose source is a padded DASH manifest", async () => {
    const failure = await failureOf(
      render([video([{ id: "sneaky", src: url("padded.mpd"), in: 0, out: 1, startTime: 0 }])]),
    );
    expect(failure).toMatchObject({ kind: "source-refused", retryable: false });
    expect(failure.message).toMatch(/^Asset for clip "sneaky" was refused: .*playlist or manifest/);
  });

  it("an overlay image that is a padded DASH manifest", async () => {
    const failure = await failureOf(
      render([
        video([{ id: "a", src: url("clip.mp4"), in: 0, out: 1, startTime: 0 }]),
        { type: "overlay", clips: [{ id: "logo", src: url("padded.mpd"), startTime: 0, duration: 1 }] },
      ]),
    );
    expect(failure).toMatchObject({ kind: "source-refused", retryable: false });
    expect(failure.message).toMatch(/^Asset for clip "logo" was refused: .*playlist or manifest/);
  });
});

describe("timeline assets: fetched once, only when used, and in-points checked against the probe", () => {
  it("a URL used as a clip's source and as an overlay image is downloaded once", async () => {
    // The clip's in-point past the end stops the job after both probes, before FFmpeg runs.
    const failure = await failureOf(
      render([
        video([{ id: "v", src: url("png-frames.mov"), in: 5, out: 6, startTime: 0 }]),
        { type: "overlay", clips: [{ id: "o", src: url("png-frames.mov"), startTime: 0, duration: 1 }] },
      ]),
    );
    expect(failure.message).toMatch(/^Clip "v" starts at 5 s/);
    expect(fetched.get("png-frames.mov")).toBe(1);
  });

  it("a timeline of many assets fetches a few at a time, not all at once (an enterprise timeline may name 500)", async () => {
    held.most = 0;
    const clips = Array.from({ length: 10 }, (_, i) => ({
      id: `c${i}`,
      src: url(`held/clip.mp4?n=${i}`),
      in: 0,
      out: 0.2,
      startTime: i * 0.2,
    }));
    await render([{ type: "video", clips }]);
    expect(held.most).toBeGreaterThan(1);
    expect(held.most).toBeLessThanOrEqual(4);
    expect([...fetched.keys()].filter((k) => k.startsWith("held/"))).toHaveLength(10);
  });

  it("a timeline whose filter graph is longer than Linux lets one argument be (128 KiB) renders: 600 lines of text", async () => {
    const text = Array.from({ length: 600 }, (_, i) => `line ${i}`).join("\n");
    const result = await render([
      video([{ id: "v", src: url("clip.mp4"), in: 0, out: 1, startTime: 0 }]),
      { type: "text", clips: [{ id: "t", text, startTime: 0, duration: 1 }] },
    ]);
    expect(result.duration).toBe(1);
  });

  it("a muted clip's replaceAudio is neither downloaded nor probed", async () => {
    const result = await render([
      video([
        { id: "m", src: url("clip.mp4"), in: 0, out: 1, startTime: 0, mute: true, replaceAudio: url("missing.m4a") },
      ]),
    ]);
    expect(result.duration).toBe(1);
    expect([...fetched.keys()]).toEqual(["clip.mp4"]);
  });

  it("a clip whose in-point is at or past the end of its source fails, not retried, naming the clip and both times", async () => {
    const failure = await failureOf(
      render([
        video([
          { id: "at-end", src: url("silent.mp4"), in: 1, out: 2, startTime: 0 },
          { id: "past", src: url("silent.mp4"), in: 2.5, out: 3, startTime: 1 },
          { id: "fine", src: url("silent.mp4"), in: 0.5, out: 1, startTime: 2 },
        ]),
      ]),
    );
    expect(failure).toMatchObject({ kind: "invalid-timeline", retryable: false });
    expect(failure.message).toBe(
      'Clip "at-end" starts at 1 s into its source, but the source is only 1 s long; ' +
        'Clip "past" starts at 2.5 s into its source, but the source is only 1 s long',
    );
  });
});

describe("a timeline asset that fails", () => {
  it("stops the other assets' downloads, and the job fails with the first failure once they have stopped", async () => {
    const failure = await failureOf(
      render([
        video([
          { id: "slow", src: url("slow.mp4"), in: 0, out: 1, startTime: 0 },
          { id: "missing", src: url("missing.mp4"), in: 0, out: 1, startTime: 1 },
        ]),
      ]),
    );
    expect(failure.message).toMatch(/^Asset for clip "missing" could not be downloaded/);
    expect(fetched.get("slow.mp4")).toBe(1);
    // Closed by the renderer, not by the download's 20 s timeout.
    await vi.waitFor(() => expect(slowClosed).toBe(true), { timeout: 3000, interval: 20 });
  });

  it("fails, not retried, when the assets together are over the size cap each of them is under", async () => {
    const each = (await readFile(join(dir, "clip.mp4"))).length;
    const clips = Array.from({ length: 3 }, (_, i) => ({
      id: `c${i}`,
      src: url(`held/clip.mp4?n=${i}`),
      in: 0,
      out: 1,
      startTime: i,
    }));
    const failure = await failureOf(render([video(clips)], { ...policy, maxBytes: Math.floor(each * 2.5) }));
    expect(failure).toMatchObject({ kind: "source-refused", retryable: false });
    expect(failure.message).toMatch(
      new RegExp(
        `^Asset for clip "c\\d" could not be downloaded: Source refused: http://127\\.0\\.0\\.1:\\d+/held/clip\\.mp4 is (over what is left|\\d+ bytes, over the \\d+ bytes left) of the ${+(Math.floor(each * 2.5) / 1024 ** 2).toFixed(2)} MiB limit on a timeline's assets together$`,
      ),
    );
  });
});
