import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { head } from "../../../encoder/ffmpeg/args/command";
import { probeFile } from "../../../encoder/ffmpeg/probe";
import { limitToolMemory, MAX_PROBE_REPORT_BYTES, runFfmpeg, runFfprobe } from "../../../encoder/ffmpeg/run";
import { bytesRead } from "../../../encoder/ffmpeg/watchdog";
import { growingPictureVideo } from "../../support/hostile-media";
import { ffmpeg, ffprobeJson } from "../../support/media";

/**
 * What ends a run of FFmpeg besides its own exit, on real FFmpeg processes: a decoder refusing
 * a picture over the size limit in the middle of the stream, and the watchdog (no progress for
 * the stall window; longer than the time limit allows).
 */
const exec = promisify(execFile);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ffmpeg-run-limits-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Whether any FFmpeg still runs with `marker` in its command line. */
async function ffmpegRunning(marker: string) {
  const { stdout } = await exec("pgrep", ["-f", `ffmpeg.*${marker}`]).catch(() => ({ stdout: "" }));
  return stdout.trim() !== "";
}

const encodeTo = (input: string, output: string) => [
  ...head(input),
  "-vf",
  "scale=160:-2",
  "-c:v",
  "libx264",
  "-preset",
  "ultrafast",
  "-pix_fmt",
  "yuv420p",
  output,
];

describe("a picture that grows past the size limit after the first frame", () => {
  it("ends the encode at that frame with a readable refusal, not a completion with frames missing", async () => {
    const input = join(dir, "grows.mkv");
    // 2 s of 320x240 frames, then 1 s whose frames claim 16000x16000 (the probe sees only the first size).
    await growingPictureVideo(input, {
      first: { size: "320x240", seconds: 2 },
      after: { size: 16000, seconds: 1 },
      fps: 10,
    });
    const err = await runFfmpeg(encodeTo(input, join(dir, "grows.mp4")), { workDir: dir, durationSeconds: 3 }).catch(
      (e) => e,
    );
    expect(err).toMatchObject({ kind: "source-refused", retryable: false });
    expect(err.message).toBe(
      "Source refused: a frame of the source is 16000x16000 pixels; the largest accepted is 8192 pixels a side and 35.4 megapixels in all (8192x4320).",
    );
    expect(await ffmpegRunning("grows.mp4")).toBe(false);
  });

  it("frames that change size within the limit are encoded, all of them", async () => {
    const input = join(dir, "within.mkv");
    await growingPictureVideo(input, {
      first: { size: "320x240", seconds: 1 },
      after: { size: 640, seconds: 1 },
      fps: 10,
    });
    await runFfmpeg(encodeTo(input, join(dir, "within.mp4")), { workDir: dir, durationSeconds: 2 });
    const probe = await ffprobeJson(join(dir, "within.mp4"), ["-count_frames"]);
    expect(Number(probe.streams[0].nb_read_frames)).toBe(20);
  });
});

describe("the memory a run may hold, and the report it may give", () => {
  const clip = () => join(dir, "memory-clip.mp4");
  beforeAll(() =>
    ffmpeg([
      "-f",
      "lavfi",
      "-i",
      "testsrc2=size=1280x720:rate=30:duration=1",
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      clip(),
    ]),
  );
  afterEach(() => limitToolMemory(undefined));

  it("an encode that needs more than the limit fails for good, saying so, and the next run under a fit limit encodes", async () => {
    limitToolMemory(48 * 1024 ** 2);
    const err = await runFfmpeg(encodeTo(clip(), join(dir, "starved.mp4")), { workDir: dir, durationSeconds: 1 }).catch(
      (e) => e,
    );
    expect(err).toMatchObject({ kind: "memory-exceeded", retryable: false });
    expect(err.message).toBe(
      "Encoding needs more memory than a job may use on this encoder (0.05 GiB): FFmpeg could not allocate it.",
    );
    limitToolMemory(1024 ** 3);
    await runFfmpeg(encodeTo(clip(), join(dir, "fed.mp4")), { workDir: dir, durationSeconds: 1 });
    expect((await ffprobeJson(join(dir, "fed.mp4"))).streams[0].width).toBe(160);
  });

  it("under a limit, a missing tool is still reported as not installed, not as FFmpeg's failure", async () => {
    limitToolMemory(1024 ** 3);
    const bin = join(dir, "prlimit-only");
    await exec("mkdir", ["-p", bin]);
    await symlink((await exec("which", ["prlimit"])).stdout.trim(), join(bin, "prlimit"));
    const path = process.env.PATH;
    process.env.PATH = bin;
    const err = await runFfprobe(["-version"]).catch((e) => e);
    process.env.PATH = path;
    expect(err).toMatchObject({
      kind: "encoder-setup",
      message: expect.stringMatching(/is not installed on the encoder$/),
    });
  });

  it("a report past MAX_PROBE_REPORT_BYTES (a file carrying megabytes of tags) refuses the file rather than fill the heap", async () => {
    const tagged = join(dir, "tagged.mkv");
    const metadata = join(dir, "tags.txt");
    await writeFile(metadata, `;FFMETADATA1\ntitle=${"x".repeat(MAX_PROBE_REPORT_BYTES + 1024)}\n`);
    await ffmpeg(["-i", clip(), "-i", metadata, "-map_metadata", "1", "-c", "copy", tagged]);
    const err = await probeFile(tagged, { workDir: dir }).catch((e) => e);
    expect(err).toMatchObject({ kind: "source-refused", retryable: false });
    expect(err.message).toBe("Source refused: ffprobe's report on the file is over 8 MiB");
  });
});

describe("the watchdog", () => {
  it("reads how much a process has read, and nothing of a process that is not there", async () => {
    const before = await bytesRead(process.pid);
    const file = join(dir, "64k");
    await writeFile(file, Buffer.alloc(65536));
    await readFile(file);
    expect((await bytesRead(process.pid))! - before!).toBeGreaterThanOrEqual(65536);
    expect(await bytesRead(2 ** 22 + 1)).toBeNull();
  });

  it("stops an FFmpeg waiting on input that never comes (a FIFO nobody writes), retryably, once the stall window has passed", async () => {
    const fifo = join(dir, "never-written.fifo");
    await exec("mkfifo", [fifo]);
    // Waiting on the FIFO for ever: only the watchdog can end the run.
    const err = await runFfmpeg([...head(fifo), "-f", "null", "-"], {
      workDir: dir,
      durationSeconds: 10,
      watchdog: { stallMs: 1500, timeLimitFactor: 100 },
    }).catch((e) => e);
    expect(err).toMatchObject({ kind: "ffmpeg", retryable: true });
    expect(err.message).toBe(
      "FFmpeg could not process the source: ffmpeg made no progress for 1.5 s (it encoded nothing and read nothing) and was stopped.",
    );
    expect(await ffmpegRunning("never-written.fifo")).toBe(false);
  });

  it("leaves alone an FFmpeg whose output time advances, however slowly", async () => {
    const args = [
      "-hide_banner",
      "-nostdin",
      "-re",
      "-f",
      "lavfi",
      "-i",
      "testsrc=size=64x64:rate=10:duration=4",
      "-loglevel",
      "warning",
      "-progress",
      "pipe:1",
      "-nostats",
      "-f",
      "null",
      "-",
    ];
    const fractions: number[] = [];
    await runFfmpeg(args, {
      durationSeconds: 4,
      onProgress: (f) => fractions.push(f),
      watchdog: { stallMs: 2500, timeLimitFactor: 100 },
    });
    expect(fractions.at(-1)).toBeGreaterThan(0.9);
  });

  it("leaves alone an FFmpeg that only reads for a long time before it writes anything (a sprite sheet, a thumbnail of the last frame)", async () => {
    const input = join(dir, "read-slowly.mkv");
    // Large frames (MJPEG at high quality) so that FFmpeg, reading at the frame rate, reads all along.
    await ffmpeg([
      "-f",
      "lavfi",
      "-i",
      "testsrc2=size=640x480:rate=25:duration=5",
      "-c:v",
      "mjpeg",
      "-q:v",
      "2",
      input,
    ]);
    // Read at the frame rate (-re), one tile sheet written when the input ends.
    const args = [
      ...head([{ path: input, options: ["-re"] }]),
      "-vf",
      "scale=32:-2,tile=200x1",
      "-frames:v",
      "1",
      "-f",
      "null",
      "-",
    ];
    await expect(
      runFfmpeg(args, { workDir: dir, durationSeconds: 5, watchdog: { stallMs: 2500, timeLimitFactor: 100 } }),
    ).resolves.toBeDefined();
  });

  it("stops an FFmpeg that progresses but outlives its time limit: the factor times the media's duration, plus the stall window", async () => {
    const args = [
      "-hide_banner",
      "-nostdin",
      "-re",
      "-f",
      "lavfi",
      "-i",
      "testsrc=size=64x64:rate=10:duration=60",
      "-loglevel",
      "warning",
      "-progress",
      "pipe:1",
      "-nostats",
      "-f",
      "null",
      "-",
    ];
    // Said to be 0.5 s of media: 1 s of stall window + 2 × 0.5 s is a limit of 2 s. The source
    // runs 60 s: the run ends well before it only if the watchdog stops it.
    const err = await runFfmpeg(args, { durationSeconds: 0.5, watchdog: { stallMs: 1000, timeLimitFactor: 2 } }).catch(
      (e) => e,
    );
    expect(err).toMatchObject({ kind: "ffmpeg", retryable: true });
    const ranFor =
      /^FFmpeg could not process the source: ffmpeg ran for (\d+(?:\.\d)?) s on 0\.5 s of media, more than 2 times its duration, and was stopped\.$/.exec(
        err.message,
      );
    expect(ranFor, err.message).not.toBeNull();
    // Not before its limit, by the watchdog's own clock.
    expect(Number(ranFor?.[1])).toBeGreaterThanOrEqual(2);
  });
});

describe("ffprobe's time limit", () => {
  it("a probe that keeps reading without end (a demuxer seeking and reading again, never stalled) is stopped after one stall window", async () => {
    const bin = join(dir, "looping-ffprobe");
    await exec("mkdir", ["-p", bin]);
    // Reads all along, so the stall check never trips; a probe has no media duration to limit it by.
    await writeFile(join(bin, "ffprobe"), "#!/bin/sh\nexec cat /dev/zero > /dev/null\n", { mode: 0o755 });
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      const err = await runFfprobe(["-i", "looping-source.mkv"], {
        watchdog: { stallMs: 1000, timeLimitFactor: 100 },
      }).catch((e) => e);
      expect(err).toMatchObject({ kind: "ffmpeg", retryable: true });
      expect(err.message).toMatch(
        /^FFmpeg could not process the source: ffprobe ran for \d+(\.\d)? s, longer than a probe of its headers may, and was stopped\.$/,
      );
    } finally {
      process.env.PATH = path;
    }
  });
});

describe("FFmpeg that cannot run, or fails", () => {
  it("a missing ffmpeg is the encoder's setup, not retried", async () => {
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      await expect(runFfmpeg(["-version"])).rejects.toMatchObject({
        kind: "encoder-setup",
        retryable: false,
        message: "ffmpeg is not installed on the encoder",
      });
    } finally {
      process.env.PATH = path;
    }
  });

  it("a failed run keeps its stderr as the failure's cause, for the log line", async () => {
    const err = await runFfmpeg(["-hide_banner", "-i", "/nonexistent/source.mp4", "-f", "null", "-"]).catch((e) => e);
    expect(err).toMatchObject({ kind: "ffmpeg", retryable: true });
    expect(err.describeCause()).toMatch(/No such file or directory/);
  });
});
