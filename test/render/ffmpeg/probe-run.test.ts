/** The probe and the runner on real files and a real FFmpeg; what they parse is checked in test/unit/ffmpeg-args/probe-run.test.ts. */
import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { head, STDIN_INPUT } from "../../../encoder/ffmpeg/args/command";
import { probeFile, probeImage } from "../../../encoder/ffmpeg/probe";
import { runFfmpeg } from "../../../encoder/ffmpeg/run";
import { bombPng, hugePictureVideo } from "../../support/hostile-media";
import { ffmpeg, makeSource } from "../../support/media";
import { processesMatching } from "../../e2e/dev-runner-support";

describe("picture size limits: 8192 a side, 8192x4320 in all", () => {
  it("real files: a video of 16000x16000 PNG frames and a PNG decompression bomb are refused by their probes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "probe-huge-"));
    try {
      await hugePictureVideo(join(dir, "huge.mkv"), 16000, { seconds: 1, fps: 5 });
      await expect(probeFile(join(dir, "huge.mkv"))).rejects.toThrowError(/the video is 16000x16000 pixels/);
      await writeFile(join(dir, "bomb.png"), bombPng(16000, 16000));
      await expect(probeImage(join(dir, "bomb.png"))).rejects.toThrowError(/the image is 16000x16000 pixels/);
      // Over FFmpeg's own bound: its decoder refuses, and the log still names the size.
      await writeFile(join(dir, "bigger.png"), bombPng(30000, 30000));
      await expect(probeImage(join(dir, "bigger.png"))).rejects.toThrowError(/the image is 30000x30000 pixels/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("truncated MP4/MOV files", () => {
  it("real files: a faststart MP4 cut in half is refused (FFmpeg would encode its first half and exit 0)", async () => {
    const dir = await mkdtemp(join(tmpdir(), "probe-truncated-"));
    try {
      const whole = join(dir, "whole.mp4");
      await makeSource(whole, { seconds: 4, width: 320, height: 240 });
      expect((await probeFile(whole)).duration).toBeCloseTo(4, 1);
      const bytes = await readFile(whole);
      await writeFile(join(dir, "half.mp4"), bytes.subarray(0, bytes.length / 2));
      await expect(probeFile(join(dir, "half.mp4"))).rejects.toThrowError(/^Source refused: the file is truncated/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("probeImage (timeline overlays)", () => {
  it("names the codec and size of a PNG and a JPEG, and gives null for a file without a picture", async () => {
    const dir = await mkdtemp(join(tmpdir(), "probe-image-"));
    try {
      await ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=48x20", "-frames:v", "1", join(dir, "a.png")]);
      await ffmpeg(["-f", "lavfi", "-i", "color=c=red:size=64x32", "-frames:v", "1", join(dir, "b.jpg")]);
      await ffmpeg(["-f", "lavfi", "-i", "sine=duration=0.2", join(dir, "c.wav")]);
      expect(await probeImage(join(dir, "a.png"))).toEqual({ codec: "png", width: 48, height: 20 });
      expect(await probeImage(join(dir, "b.jpg"))).toEqual({ codec: "mjpeg", width: 64, height: 32 });
      expect(await probeImage(join(dir, "c.wav"))).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("runner helpers", () => {
  it("rejects with a readable, retryable FFmpeg failure that names no internal path", async () => {
    const workDir = "/tmp";
    const err = await runFfmpeg(
      [
        "-hide_banner",
        "-nostdin",
        "-protocol_whitelist",
        "file",
        "-i",
        `${workDir}/does-not-exist.mp4`,
        "-f",
        "null",
        "-",
      ],
      { workDir },
    ).catch((e) => e);
    expect(err).toMatchObject({ kind: "ffmpeg", retryable: true });
    expect(err.message).toMatch(
      /^FFmpeg could not process the source: ffmpeg exited with code [1-9]\d*: .*<work>\/does-not-exist\.mp4/,
    );
    expect(err.message).not.toContain("/tmp");
  });

  it("kills FFmpeg promptly on abort and rejects with the abort reason", async () => {
    const controller = new AbortController();
    // The source never ends: only the abort can end the run. The marker finds this FFmpeg among the machine's.
    const marker = `abort-${randomUUID()}`;
    let runningAtAbort: number | undefined;
    const run = runFfmpeg(
      [
        "-hide_banner",
        "-nostdin",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=320x240:rate=30",
        "-progress",
        "pipe:1",
        "-metadata",
        `comment=${marker}`,
        "-f",
        "null",
        "-",
      ],
      {
        signal: controller.signal,
        durationSeconds: 1000,
        onProgress: () => {
          runningAtAbort ??= processesMatching(`^ffmpeg .*${marker}`).length;
          controller.abort(new Error("cancelled"));
        },
      },
    );
    await expect(run).rejects.toThrowError("cancelled");
    expect(runningAtAbort).toBe(1);
    await vi.waitFor(() => expect(processesMatching(`^ffmpeg .*${marker}`)).toEqual([]), { timeout: 5000 });
  });

  describe("an input fed on stdin (a split part's piece as it downloads)", () => {
    const countFrames = (extra: string[] = []) => [...head(STDIN_INPUT), ...extra, "-f", "framemd5", "-"];

    it("reads the whole stream, and a tool that stops early (-frames) ends the stream without an error", async () => {
      const dir = await mkdtemp(join(tmpdir(), "run-stdin-"));
      try {
        const piece = join(dir, "piece.mkv");
        await makeSource(piece, { seconds: 3, width: 160, height: 120, fps: 10 });
        const whole = await runFfmpeg(countFrames(["-map", "0:v"]), { stdin: createReadStream(piece) });
        expect(whole.stderr).toBe("");
        const source = createReadStream(piece, { highWaterMark: 1024 });
        await runFfmpeg(countFrames(["-map", "0:v", "-frames:v", "2"]), { stdin: source });
        expect(source.destroyed).toBe(true);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it("an input that fails midway fails the run: FFmpeg is not left to take half a piece for the whole", async () => {
      const dir = await mkdtemp(join(tmpdir(), "run-stdin-"));
      try {
        const piece = join(dir, "piece.mkv");
        await makeSource(piece, { seconds: 3, width: 160, height: 120, fps: 10 });
        const bytes = await readFile(piece);
        const half = Readable.from(
          (async function* () {
            yield bytes.subarray(0, bytes.length / 2);
            throw new Error("connection reset");
          })(),
        );
        const err = await runFfmpeg(countFrames(["-map", "0:v"]), { stdin: half }).catch((e) => e);
        expect(err).toMatchObject({ kind: "download", retryable: true });
        expect(err.message).toMatch(/the input stopped arriving: connection reset/);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
