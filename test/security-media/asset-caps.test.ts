import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_BLOCK_LINES, MAX_CAPTION_BYTES } from "../../domain/captions";
import { MAX_IMAGE_BYTES } from "../../encoder/timeline/assets";
import type { Job } from "../../client";
import { expectStatus, unchecked } from "../support/api-client";
import { startFixtureServer, type FixtureServer } from "../e2e/fixtures";
import { startE2E, type Client, type E2E } from "../e2e/harness";
import { startFloodServer } from "./servers";

/**
 * Every asset the encoder downloads, at ten times its cap, beside an ordinary job (docs/security.md#sources-and-media):
 * each hostile job fails at once with its own error naming the clip, the file and the cap, the
 * ordinary job completes, and the encoder never crashes or restarts. The source cap is lowered to
 * 80 MiB (MAX_SOURCE_BYTES), above the overlay images' 64 MiB; the caption files' cap is 4 MiB.
 * The floods send no length, so each is stopped by the cap as it arrives.
 */
const MiB = 1024 * 1024;
const SOURCE_CAP = 80 * MiB;

let e2e: E2E;
let fixtures: FixtureServer;
let flood: Awaited<ReturnType<typeof startFloodServer>>;
let client: Client;
const log: string[] = [];

beforeAll(async () => {
  [e2e, fixtures, flood] = await Promise.all([
    startE2E({
      allowLoopbackSources: true,
      env: { MAX_SOURCE_BYTES: String(SOURCE_CAP) },
      log: (source, line) => log.push(`${source}: ${line}`),
    }),
    startFixtureServer(),
    startFloodServer(),
  ]);
  client = await e2e.client();
  await fixtures.source("clip.mp4", { seconds: 2, width: 320, height: 240 });
});
afterAll(async () => {
  await e2e?.stop();
  await fixtures?.stop();
  await flood?.stop();
});

const clip = (src: string, extra: object = {}) => ({ id: "main", src, in: 0, out: 1, startTime: 0, ...extra });
const timeline = (tracks: unknown[]) => ({ edl: { version: "1.1", timeline: { tracks } } });

async function run(kind: "job" | "timeline", body: unknown): Promise<Job> {
  const created = await (kind === "job" ? client.createJob(unchecked(body)) : client.createEdlJob(unchecked(body)));
  expectStatus(created, 201, JSON.stringify(created.body));
  return e2e.waitFor(client, created.body.id, undefined, 120_000);
}

describe("every asset kind at ten times its cap, beside an ordinary job", () => {
  let ordinary: Promise<Job>;
  let hostile: Record<string, Promise<Job>>;

  beforeAll(async () => {
    ordinary = run("job", { inputUrl: fixtures.url("clip.mp4"), preset: "mp4_264_240p" });
    const media = fixtures.url("clip.mp4");
    hostile = {
      source: run("job", { inputUrl: flood.url("source.mp4", 10 * SOURCE_CAP), preset: "mp4_264_240p" }),
      clip: run("timeline", timeline([{ type: "video", clips: [clip(flood.url("clip.mp4", 10 * SOURCE_CAP))] }])),
      audio: run(
        "timeline",
        timeline([{ type: "video", clips: [clip(media, { replaceAudio: flood.url("dub.m4a", 10 * SOURCE_CAP) })] }]),
      ),
      image: run(
        "timeline",
        timeline([
          { type: "video", clips: [clip(media)] },
          {
            type: "overlay",
            clips: [{ id: "logo", src: flood.url("logo.png", 10 * MAX_IMAGE_BYTES), startTime: 0, duration: 1 }],
          },
        ]),
      ),
      caption: run(
        "timeline",
        timeline([
          { type: "video", clips: [clip(media)] },
          { type: "caption", clips: [{ id: "subs", src: flood.url("subs.srt", 10 * MAX_CAPTION_BYTES, "a\n") }] },
        ]),
      ),
      // Within the cap, but every line a line of its own: the parse stops at its limit, not at the end.
      lines: run(
        "timeline",
        timeline([
          { type: "video", clips: [clip(media)] },
          { type: "caption", clips: [{ id: "subs", src: flood.url("lines.srt", MAX_CAPTION_BYTES - 2, "a\n") }] },
        ]),
      ),
    };
  });

  const refused = (job: Job) => {
    expect(job, JSON.stringify(job)).toMatchObject({ status: "failed", retryCount: 0, outputUrl: null });
    return job.errorMessage;
  };

  it("a preset job's source: refused while it downloads, not retried", async () => {
    expect(refused(await hostile.source)).toBe(`Source refused: larger than the ${SOURCE_CAP}-byte limit`);
    expect(flood.sent("source.mp4")).toBeLessThan(5 * SOURCE_CAP);
  });

  it("a video clip's source: the clip, the file and the sources' cap named", async () => {
    expect(refused(await hostile.clip)).toMatch(
      /^Asset for clip "main" could not be downloaded: Source refused: http:\/\/127\.0\.0\.1:\d+\/clip\.mp4 is larger than the 80 MiB limit on sources$/,
    );
    expect(flood.sent("clip.mp4")).toBeLessThan(5 * SOURCE_CAP);
  });

  // Which cap it meets first depends on whether the clip's own source has arrived yet.
  it("a clip's replaceAudio, beside the clip's own source: its cap or the timeline's assets' together", async () => {
    expect(refused(await hostile.audio)).toMatch(
      /^Asset for clip "main" could not be downloaded: Source refused: http:\/\/127\.0\.0\.1:\d+\/dub\.m4a is (over what is left of the 80 MiB limit on a timeline's assets together|larger than the 80 MiB limit on sources)$/,
    );
    expect(flood.sent("dub.m4a")).toBeLessThan(5 * SOURCE_CAP);
  });

  it("an overlay image: the clip, the file and the images' cap named", async () => {
    expect(refused(await hostile.image)).toMatch(
      /^Asset for clip "logo" could not be downloaded: Source refused: http:\/\/127\.0\.0\.1:\d+\/logo\.png is larger than the 64 MiB limit on overlay images$/,
    );
    expect(flood.sent("logo.png")).toBeLessThan(5 * MAX_IMAGE_BYTES);
  });

  it("a caption file: the clip, the file and the caption files' cap named, the file never read whole", async () => {
    expect(refused(await hostile.caption)).toMatch(
      /^Asset for clip "subs" could not be downloaded: Source refused: http:\/\/127\.0\.0\.1:\d+\/subs\.srt is larger than the 4 MiB limit on caption files$/,
    );
    expect(flood.sent("subs.srt")).toBeLessThan(5 * MAX_CAPTION_BYTES);
  });

  it("a caption file just under its cap, of one-character lines: the parse stops at its limit", async () => {
    expect(refused(await hostile.lines)).toBe(
      `Caption clip subs: line ${MAX_BLOCK_LINES + 1}: a cue of more than ${MAX_BLOCK_LINES} lines, more than a timeline draws`,
    );
  });

  it("the ordinary job beside them completes", async () => {
    expect(await ordinary).toMatchObject({ status: "completed" });
  });

  it("the encoder neither crashed nor restarted: it started once and the supervisor reported nothing", async () => {
    await Promise.all([ordinary, ...Object.values(hostile)]);
    expect(log.filter((line) => line.includes('"msg":"encoder listening"'))).toHaveLength(1);
    expect(log.filter((line) => line.startsWith("supervisor: "))).toEqual([]);
  });
});
