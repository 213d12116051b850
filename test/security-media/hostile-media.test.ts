import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFixtureServer, type FixtureServer } from "../e2e/fixtures";
import { expectStatus, unchecked } from "../support/api-client";
import { startE2E, type Client, type E2E } from "../e2e/harness";
import { bombPng, growingPictureVideo, hugePictureVideo } from "../support/hostile-media";
import { ffmpeg, makeSource } from "../support/media";
import { startTrickleServer } from "./servers";

/**
 * Hostile media against the running service with its real encoder: playlists naming local
 * files, truncated files, pictures claiming a huge size, a decompression-bomb overlay, sources
 * that trickle forever. Each job ends `failed` with a readable errorMessage within a bounded
 * time (the waits below give up after 90 s), and leaves nothing in the encoder's work dir.
 *
 * The encoder's minimum download rate is its default, 32 KiB/s, over a window lowered to 2 s
 * (DOWNLOAD_STALL_MS) so a trickling source fails each attempt in seconds rather than 30 s.
 */
let e2e: E2E;
let fixtures: FixtureServer;
let trickle: Awaited<ReturnType<typeof startTrickleServer>>;
let client: Client;
const BOUND_MS = 90_000;

/** A DASH manifest whose one representation is a local file. */
const mpd = (target: string) =>
  `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT1S" minBufferTime="PT1S" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011">` +
  `<Period><AdaptationSet mimeType="video/mp4"><Representation id="1" bandwidth="1000" width="160" height="120" codecs="avc1.42c00d">` +
  `<BaseURL>${target}</BaseURL></Representation></AdaptationSet></Period></MPD>\n`;

beforeAll(async () => {
  [e2e, fixtures, trickle] = await Promise.all([
    startE2E({ allowLoopbackSources: true, env: { DOWNLOAD_STALL_MS: "2000" } }),
    startFixtureServer(),
    startTrickleServer(),
  ]);
  client = await e2e.client();
  const dir = fixtures.dir;
  await Promise.all([
    makeSource(join(dir, "clip.mp4"), { seconds: 2, width: 320, height: 240 }),
    // Written the way most cameras and FFmpeg write by default: the index (moov) after the media.
    ffmpeg([
      "-f",
      "lavfi",
      "-i",
      "testsrc2=size=320x240:rate=30:duration=4",
      "-f",
      "lavfi",
      "-i",
      "sine=duration=4",
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-c:a",
      "aac",
      join(dir, "moov-last.mp4"),
    ]),
    hugePictureVideo(join(dir, "huge.mkv"), 16000, { seconds: 2, fps: 5 }),
    growingPictureVideo(join(dir, "grows.mkv"), {
      first: { size: "320x240", seconds: 1 },
      after: { size: 16000, seconds: 1 },
      fps: 5,
    }),
    writeFile(join(dir, "bomb.png"), bombPng(16000, 16000)),
    writeFile(join(dir, "bigger-bomb.png"), bombPng(30000, 30000)),
  ]);
  for (const name of ["clip.mp4", "moov-last.mp4"]) {
    const bytes = await readFile(join(dir, name));
    await writeFile(join(dir, `half-${name}`), bytes.subarray(0, bytes.length / 2));
  }
});
afterAll(async () => {
  await e2e?.stop();
  await fixtures?.stop();
  await trickle?.stop();
});

async function failed(kind: "job" | "timeline", body: unknown) {
  const created = await (kind === "job" ? client.createJob(unchecked(body)) : client.createEdlJob(unchecked(body)));
  expectStatus(created, 201, JSON.stringify(created.body));
  const job = await e2e.waitFor(client, created.body.id, undefined, BOUND_MS);
  expect(job, JSON.stringify(job)).toMatchObject({ status: "failed", outputUrl: null });
  // Words for a person: no stack, no server path, no file contents.
  expect(job.errorMessage).not.toMatch(/\n|\bat \w+ \(|\/tmp\/|node:|root:/);
  await vi.waitFor(async () => expect((await readdir(e2e.workDir)).filter((d) => d.includes(job.id))).toEqual([]));
  return job;
}

const preset = (inputUrl: string) => failed("job", { inputUrl, preset: "mp4_264_240p" });
const timeline = (tracks: unknown[]) => failed("timeline", { edl: { version: "1.0", timeline: { tracks } } });
const videoTrack = (src: string) => ({ type: "video", clips: [{ id: "main", src, in: 0, out: 1, startTime: 0 }] });

const PLAYLIST =
  /^The source is a playlist or manifest, not a media file\. Playlists \(HLS, DASH, concat\) reference further files and are not accepted as sources\.$/;

describe.concurrent("playlists and manifests that name local files", () => {
  it.each([
    [
      "an HLS playlist",
      "trap.m3u8",
      "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n",
    ],
    ["the same playlist named .mp4 (judged by content)", "disguised.mp4", "#EXTM3U\n#EXTINF:10,\n/etc/passwd\n"],
    ["a concat list", "list.txt", "ffconcat version 1.0\nfile '/etc/passwd'\n"],
    ["a DASH manifest", "trap.mpd", mpd("file:///etc/passwd")],
    ["a DASH manifest padded past 4 KiB", "padded.mp4", `<!-- ${"x".repeat(9000)} -->\n${mpd("file:///etc/passwd")}`],
  ])("%s: refused before FFmpeg reads what it names, not retried", async (_name, file, content) => {
    const job = await preset(await fixtures.file(file, content));
    expect(job.retryCount).toBe(0);
    expect(job.errorMessage).toMatch(PLAYLIST);
  });

  it("a timeline clip that is an HLS playlist: refused, the clip named", async () => {
    const src = await fixtures.file("clip-trap.m3u8", "#EXTM3U\n#EXTINF:1,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n");
    const job = await timeline([videoTrack(src)]);
    expect(job.retryCount).toBe(0);
    expect(job.errorMessage).toMatch(/^Asset for clip "main" was refused: The source is a playlist or manifest/);
  });
});

describe.concurrent("truncated files", () => {
  it("an MP4 with its index first, cut in half: refused at the probe (FFmpeg alone would encode the first half), not retried", async () => {
    const job = await preset(fixtures.url("half-clip.mp4"));
    expect(job.retryCount).toBe(0);
    expect(job.errorMessage).toMatch(
      /^Source refused: the file is truncated: its index lists 0\.\d MiB of media, but the file holds 0\.\d MiB in all\.$/,
    );
  });

  it("an MP4 with its index last, cut in half: FFmpeg finds no index; retried as FFmpeg failures are, then failed", async () => {
    const job = await preset(fixtures.url("half-moov-last.mp4"));
    expect(job.retryCount).toBe(2);
    expect(job.errorMessage).toMatch(
      /^FFmpeg could not process the source: ffprobe exited with code 1: .*moov atom not found/,
    );
  });
});

describe.concurrent("pictures claiming a huge size", () => {
  it("a video of 16000x16000 frames (31 KB each): refused at the probe, which does not decode it either", async () => {
    const job = await preset(fixtures.url("huge.mkv"));
    expect(job.retryCount).toBe(0);
    expect(job.errorMessage).toBe(
      "Source refused: the video is 16000x16000 pixels; the largest accepted is 8192 pixels a side and 35.4 megapixels in all (8192x4320).",
    );
  });

  it("a video whose frames grow to 16000x16000 after the first second (the probe sees 320x240): refused by the decoder mid-encode, not retried", async () => {
    const job = await preset(fixtures.url("grows.mkv"));
    expect(job.retryCount).toBe(0);
    expect(job.errorMessage).toBe(
      "Source refused: a frame of the source is 16000x16000 pixels; the largest accepted is 8192 pixels a side and 35.4 megapixels in all (8192x4320).",
    );
  });

  it("a 30000x30000 picture, past FFmpeg's own bound: refused with the size FFmpeg read", async () => {
    const job = await preset(fixtures.url("bigger-bomb.png"));
    expect(job.retryCount).toBe(0);
    expect(job.errorMessage).toMatch(/^Source refused: the video is 30000x30000 pixels/);
  });

  it("a decompression-bomb overlay (a 31 KB PNG of 16000x16000) in a timeline: refused, the clip named", async () => {
    const job = await timeline([
      videoTrack(fixtures.url("clip.mp4")),
      { type: "overlay", clips: [{ id: "bomb", src: fixtures.url("bomb.png"), startTime: 0, duration: 1 }] },
    ]);
    expect(job.retryCount).toBe(0);
    expect(job.errorMessage).toBe(
      'Asset for clip "bomb" was refused: Source refused: the image is 16000x16000 pixels; the largest accepted is 8192 pixels a side and 35.4 megapixels in all (8192x4320).',
    );
  });
});

describe.concurrent("sources that trickle forever (a byte a second)", () => {
  const STALLED = "Download failed: the source sent less than 32 KiB/s for 2 s";

  it("its body: each attempt gives up after the stall window; three attempts, then failed", async () => {
    const job = await preset(trickle.url("/body/source.mp4"));
    expect(job).toMatchObject({ retryCount: 2, errorMessage: STALLED });
    expect(trickle.requests("/body/source.mp4")).toBe(3);
  });

  it("its status line and headers: the same", async () => {
    const job = await preset(trickle.url("/headers/source.mp4"));
    expect(job).toMatchObject({ retryCount: 2, errorMessage: STALLED });
    expect(trickle.requests("/headers/source.mp4")).toBe(3);
  });

  it("a timeline clip's source: the same, the clip named", async () => {
    const job = await timeline([videoTrack(trickle.url("/body/clip.mp4"))]);
    expect(job).toMatchObject({
      retryCount: 2,
      errorMessage: `Asset for clip "main" could not be downloaded: ${STALLED}`,
    });
  });
});

describe("the encoder's work dir", () => {
  it("holds nothing once every job has ended: no job's dir, no input kept from a split", async () => {
    expect(await readdir(e2e.workDir)).toEqual(["kept"]);
    expect(await readdir(join(e2e.workDir, "kept"))).toEqual([]);
  });
});
