import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { AwsClient } from "aws4fetch";
import { Parser } from "m3u8-parser";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Job } from "../../client";
import { streamPrefix } from "../../domain/stream/layout";
import { planStream } from "../../domain/stream/plan";
import { bodyOf, expectStatus } from "../support/api-client";
import { audioDiscontinuities } from "../support/audio-continuity";
import { type BrowserPlayer, startBrowserPlayer } from "../support/browser-player";
import { makeNumberedSource, readFrameNumbers } from "../support/frame-numbers";
import { frameOrderProblem } from "../support/frame-order";
import { ffmpeg, ffprobeJson } from "../support/media";
import { type FixtureServer, startFixtureServer } from "./fixtures";
import { type Client, type E2E, startE2E } from "./harness";

/**
 * Playable in seconds, through the whole service (docs/playback.md): two encoders behind the
 * local stand-in for Fly's proxy, a source longer than STREAM_SPLIT_MIN_SECONDS made in parts over both,
 * one shorter encoded whole; hls.js and dash.js in headless Chromium play the playback link while
 * the job encodes and on to its end; the finished stream, read through the link, holds every
 * source frame once and an unbroken tone.
 */
const NTSC = { num: 30000, den: 1001 };
const LONG_SECONDS = 60;
/**
 * What a part's read may cost beyond its span, whatever the source's length: the index, FFmpeg's
 * probe of the first packets (up to its 5 MB probe size), the keyframe interval before it, and
 * what the loopback sockets hold when it stops reading (their buffers grow to several MiB each,
 * the more the slower FFmpeg drains them on a loaded machine).
 */
const PART_READ_OVERHEAD = 20 * 1024 ** 2;
const SHORT_SECONDS = 24;

let e2e: E2E;
let fixtures: FixtureServer;
let client: Client;
let player: BrowserPlayer;
let s3: AwsClient;
const logs: string[] = [];
/** Frames each source holds, as FFmpeg made them (a frame starts before the duration's end). */
const frames = new Map<number, number>();

beforeAll(async () => {
  [e2e, fixtures, player] = await Promise.all([
    startE2E({
      allowLoopbackSources: true,
      encoders: 2,
      env: { STREAM_SPLIT_MIN_SECONDS: "30", SPLIT_PART_SECONDS: "6", HEARTBEAT_MS: "500" },
      log: (from, line) => from === "encoder" && logs.push(line),
    }),
    startFixtureServer(),
    startBrowserPlayer(),
  ]);
  client = await e2e.client();
  const { s3: storage } = e2e.stack.info.cloud;
  s3 = new AwsClient({ ...storage, service: "s3" });
  await Promise.all([
    makeNumberedSource(join(fixtures.dir, "long.mp4"), {
      seconds: LONG_SECONDS,
      fps: NTSC,
      width: 854,
      height: 480,
      audio: true,
    }),
    makeNumberedSource(join(fixtures.dir, "short.mp4"), {
      seconds: SHORT_SECONDS,
      fps: NTSC,
      width: 854,
      height: 480,
      audio: true,
    }),
  ]);
  // The same, its index (moov) at the end, as cameras write it: read by ranges from both ends.
  await ffmpeg(["-i", join(fixtures.dir, "long.mp4"), "-c", "copy", join(fixtures.dir, "moov-last.mp4")]);
  for (const [seconds, name] of [
    [LONG_SECONDS, "long.mp4"],
    [SHORT_SECONDS, "short.mp4"],
  ] as const)
    frames.set(
      seconds,
      Number((await ffprobeJson(join(fixtures.dir, name), ["-count_frames"])).streams[0].nb_read_frames),
    );
});
afterAll(async () => {
  await player?.stop();
  await e2e?.stop();
  await fixtures?.stop();
});

const create = async (source: string, preset: string) =>
  bodyOf(await client.createJob({ inputUrl: source, preset }), 201).id;

/** The job as soon as its playback link is given; the link may only ever come while it processes or once it completed. */
const playable = (id: string) =>
  e2e.waitFor(client, id, (job) => job.playbackUrl !== null || job.status === "failed" || job.status === "cancelled");

function parse(text: string) {
  const parser = new Parser();
  parser.push(text);
  parser.end();
  return parser.manifest;
}

/**
 * Reads a media playlist through the link until the job ends, checking at each read that it only
 * grows: every segment listed before is listed again, the same, in the same place.
 */
async function watchGrowth(link: string, rendition: string, id: string) {
  const url = new URL(`${rendition}/index.m3u8`, link).toString();
  const reads: { type: string | undefined; segments: { uri: string; duration: number }[] }[] = [];
  for (;;) {
    const res = await fetch(url);
    const text = await res.text();
    expect(res.status, `${url}: ${text.slice(0, 500)}`).toBe(200);
    const manifest = parse(text);
    const last = reads[reads.length - 1];
    if (last) expect(manifest.segments.slice(0, last.segments.length)).toEqual(last.segments);
    reads.push({ type: manifest.playlistType, segments: manifest.segments });
    if (manifest.playlistType === "VOD") return reads;
    const job = bodyOf(await client.getJob(id), 200);
    if (job.status === "failed" || job.status === "cancelled") throw new Error(`job ${id} ${job.status}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Starts the player on the link and waits for it to be playing while the job still processes. */
async function playingWhileProcessing(id: string, link: string) {
  const page = await player.play(link, 2);
  await vi.waitFor(
    async () => {
      const state = await player.state(page);
      expect(state.fatal).toBeNull();
      expect(state.times.some((t) => t > 0.5)).toBe(true);
    },
    { timeout: 60_000, interval: 200 },
  );
  return { page, statusWhenPlaying: bodyOf(await client.getJob(id), 200).status };
}

async function playsToTheEnd(page: Awaited<ReturnType<BrowserPlayer["play"]>>, seconds: number) {
  await vi.waitFor(
    async () => {
      const state = await player.state(page);
      expect(state.fatal).toBeNull();
      expect(state.ended).toBe(true);
    },
    { timeout: 120_000, interval: 500 },
  );
  const { times } = await player.state(page);
  expect(Math.max(...times)).toBeGreaterThan(seconds - 1);
}

/** The finished stream through its link: every source frame once, in order, and the tone unbroken. */
async function checkContent(link: string, seconds: number) {
  expect(frameOrderProblem(await readFrameNumbers(link), frames.get(seconds) ?? 0)).toBeNull();
  expect(await audioDiscontinuities(link, { toneHz: 440 })).toEqual([]);
}

describe("docs/playback.md › a split HLS stream", () => {
  let id: string;
  let job: Job;
  beforeAll(async () => {
    id = await create(fixtures.url("long.mp4"), "hls_abr_264_basic");
    job = await playable(id);
  });

  it("plays in hls.js while it encodes, its EVENT playlist only growing, and on to its end once complete", async () => {
    expect(job.status).toBe("processing");
    const link = job.playbackUrl!;
    expect(link).toMatch(/\/master\.m3u8$/);
    const [{ page, statusWhenPlaying }, reads] = await Promise.all([
      playingWhileProcessing(id, link),
      watchGrowth(link, "480p", id),
    ]);
    expect(statusWhenPlaying).toBe("processing");
    // The stream's start goes to no race: the encoder that split the job keeps its first part and its audio.
    const on = (stage: RegExp) =>
      logs.find((line) => line.includes(id) && stage.test(line))?.match(/ on (\S+) {2}/)?.[1];
    expect(on(/ {2}split +on /)).toBeDefined();
    expect(on(/ {2}part 1\/\d+ {2}claim +on /)).toBe(on(/ {2}split +on /));
    expect(on(/ {2}audio {2}claim +on /)).toBe(on(/ {2}split +on /));
    expect(reads.slice(0, -1).every((r) => r.type === "EVENT")).toBe(true);
    // The VOD playlist lists the segments the EVENT one did, and the rest.
    expect(reads[reads.length - 1].segments.length).toBeGreaterThanOrEqual(
      reads[reads.length - 2]?.segments.length ?? 0,
    );
    const done = await e2e.waitFor(client, id);
    expect(done).toMatchObject({ status: "completed" });
    await playsToTheEnd(page, LONG_SECONDS);
  });

  it("through the link, the finished stream holds every source frame once, in order, and the tone unbroken across parts", async () => {
    const done = await e2e.waitFor(client, id);
    await checkContent(done.playbackUrl!, LONG_SECONDS);
  });
});

describe("docs/playback.md › a split DASH stream", () => {
  it("plays in dash.js while it encodes, and on to its end once complete; the finished MPD holds every frame once", async () => {
    const id = await create(fixtures.url("long.mp4"), "dash_abr_264_standard");
    const job = await playable(id);
    expect(job.status).toBe("processing");
    expect(job.playbackUrl).toMatch(/\/manifest\.mpd$/);
    const { page, statusWhenPlaying } = await playingWhileProcessing(id, job.playbackUrl!);
    expect(statusWhenPlaying).toBe("processing");
    const done = await e2e.waitFor(client, id);
    expect(done.status).toBe("completed");
    await playsToTheEnd(page, LONG_SECONDS);
    await checkContent(done.playbackUrl!, LONG_SECONDS);
  });
});

describe("docs/playback.md › a stream made by one encode", () => {
  it("a source shorter than STREAM_SPLIT_MIN_SECONDS: playable before it completes, every frame once", async () => {
    const id = await create(fixtures.url("short.mp4"), "hls_abr_264_basic");
    const job = await playable(id);
    expect(job.status).toBe("processing");
    const done = await e2e.waitFor(client, id);
    expect(done.status).toBe("completed");
    await checkContent(done.playbackUrl!, SHORT_SECONDS);
  });

  it("a source whose server answers no byte ranges is downloaded once, whole, then encoded: it plays, only later", async () => {
    const id = await create(fixtures.url("no-ranges/short.mp4"), "hls_abr_264_basic");
    const done = await e2e.waitFor(client, id);
    expect(done.status).toBe("completed");
    expect(done.playbackUrl).toMatch(/\/master\.m3u8$/);
    const { size } = await stat(join(fixtures.dir, "short.mp4"));
    // The first byte asked for by range, answered whole, then one download.
    expect(fixtures.bytesServed("/no-ranges/short.mp4")).toBeLessThanOrEqual(2 * size);
    await checkContent(done.playbackUrl!, SHORT_SECONDS);
  });
});

describe("docs/playback.md › the start does not wait for the whole source", () => {
  it("an MP4 whose index is at its end is read by ranges (the index first, from the end), in parts: every frame once, each part only its own span", async () => {
    const id = await create(fixtures.url("moov-last.mp4"), "hls_abr_264_basic");
    const job = await playable(id);
    expect(job.status).toBe("processing");
    const done = await e2e.waitFor(client, id);
    expect(done.status).toBe("completed");
    await checkContent(done.playbackUrl!, LONG_SECONDS);
    const { size } = await stat(join(fixtures.dir, "moov-last.mp4"));
    // What each task's proxy read from the origin (its download line): a part, its own span and a
    // bounded overhead (the index, FFmpeg's probe of the first packets, the keyframe interval before
    // it, the socket buffers in flight when it stops), whatever the source's length; the audio's
    // task, the whole file once.
    const read = (task: RegExp) =>
      logs
        .filter((line) => line.includes(id))
        .flatMap((line) => {
          const found = task.exec(line);
          const [, amount, unit] = /([\d.]+) (B|KiB|MiB|GiB) in/.exec(line) ?? [];
          return found && amount
            ? [{ task: found[1], bytes: Number(amount) * 1024 ** ["B", "KiB", "MiB", "GiB"].indexOf(unit) }]
            : [];
        });
    const { parts } = planStream(done.duration ?? LONG_SECONDS, {
      gopSeconds: 2,
      segmentSeconds: 6,
      partSeconds: 6,
      maxParts: 200,
    });
    const byPart = read(/part (\d+)\/\d+\s+download/);
    expect(byPart).toHaveLength(parts.length);
    for (const { task, bytes } of byPart) {
      const part = parts[Number(task) - 1];
      const bound = (size * (part.to - part.from)) / LONG_SECONDS + PART_READ_OVERHEAD;
      // Else a part that read the whole source would pass.
      expect(bound).toBeLessThan(size);
      expect(bytes, `part ${task}`).toBeLessThan(bound);
    }
    const [audio] = read(/(audio)\s+download/);
    expect(audio.bytes).toBeGreaterThan(size * 0.9);
    expect(audio.bytes).toBeLessThan(size * 1.2);
  });
});

describe("docs/playback.md › cancel while the stream grows", () => {
  it("the stream stops: its link is a 404, the job has none, and every segment stored is deleted", async () => {
    const id = await create(fixtures.url("long.mp4"), "hls_abr_264_basic");
    const job = await playable(id);
    expect(job.status).toBe("processing");
    expectStatus(await client.cancelJob(id), 200);
    expect(bodyOf(await client.getJob(id), 200).playbackUrl).toBeNull();
    expect((await fetch(job.playbackUrl!)).status).toBe(404);
    // Once every delivery of the job has ended (its work dirs gone), nothing of its stream is left:
    // a segment a part stored after the Worker's deletion is the part's own to delete.
    await vi.waitFor(async () => expect((await readdir(e2e.workDir)).filter((d) => d.includes(id))).toEqual([]), {
      timeout: 60_000,
      interval: 250,
    });
    const { endpoint, bucket } = e2e.stack.info.cloud.s3;
    const prefix = streamPrefix(client.accountId, id);
    await vi.waitFor(
      async () => {
        const listed = await s3.fetch(`${endpoint}/${bucket}?list-type=2&prefix=${encodeURIComponent(prefix)}`);
        expect(await listed.text()).not.toMatch(/<Key>/);
      },
      { timeout: 30_000, interval: 500 },
    );
  });
});
