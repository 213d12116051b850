import { describe, expect, it } from "vitest";
import { JobFailure } from "../../../encoder/failure";

/** What an unexpected error can say: a work-dir path, an internal address, a stack. */
const leaky = new Error("EACCES: permission denied, open '/srv/work/job-1/source' (via 10.1.2.3:5432)");

describe("each kind of job failure: its message, and whether another attempt may help", () => {
  it.each([
    [
      "source-refused",
      false,
      JobFailure.sourceRefused("10.0.0.1 is not a public address"),
      "Source refused: 10.0.0.1 is not a public address",
    ],
    [
      "source-refused",
      false,
      JobFailure.playlistSource(),
      "The source is a playlist or manifest, not a media file. Playlists (HLS, DASH, concat) reference further files and are not accepted as sources.",
    ],
    ["download", true, JobFailure.download("connection refused", leaky), "Download failed: connection refused"],
    [
      "duration-exceeded",
      false,
      JobFailure.durationExceeded(660, 600, "Starter"),
      "DURATION_EXCEEDED: the source is 660.0 s long; the Starter plan allows sources up to 600 s (10 minutes).",
    ],
    [
      "unsuitable-source",
      false,
      JobFailure.unsuitableSource("The source has no audio stream; preset audio_mp3_hq needs one."),
      "The source has no audio stream; preset audio_mp3_hq needs one.",
    ],
    [
      "invalid-timeline",
      false,
      JobFailure.invalidTimeline('Clip "a" starts at 5 s into its source, but the source is only 1 s long'),
      'Clip "a" starts at 5 s into its source, but the source is only 1 s long',
    ],
    [
      "ffmpeg",
      true,
      JobFailure.ffmpeg("FFmpeg could not process the source: ffmpeg exited with code 1", leaky),
      "FFmpeg could not process the source: ffmpeg exited with code 1",
    ],
    [
      "encoder-setup",
      false,
      JobFailure.encoderSetup("Text cannot be drawn: fc-match is missing."),
      "Text cannot be drawn: fc-match is missing.",
    ],
    [
      "upload",
      true,
      JobFailure.upload("the output could not be sent to storage (ECONNREFUSED)", leaky),
      "Upload failed: the output could not be sent to storage (ECONNREFUSED)",
    ],
    ["internal", true, JobFailure.internal(leaky), "Encoding failed because of an internal encoder error."],
  ] as const)("%s: retryable %s", (kind, retryable, failure, message) => {
    expect(failure).toBeInstanceOf(JobFailure);
    expect(failure).toMatchObject({ kind, retryable, message });
  });

  it("contract §8.3 Failures after acceptance: download and FFmpeg failures are retried, a too-long or refused source is not", () => {
    expect(JobFailure.download("timed out").retryable).toBe(true);
    expect(JobFailure.ffmpeg("FFmpeg produced no output files.").retryable).toBe(true);
    expect(JobFailure.durationExceeded(61, 60, "Starter").retryable).toBe(false);
    expect(JobFailure.sourceRefused("not a valid URL").retryable).toBe(false);
  });

  it("DURATION_EXCEEDED begins the message and carries the source's duration for the job", () => {
    const failure = JobFailure.durationExceeded(3725.04, 3600, "Pro");
    expect(failure.message).toMatch(/^DURATION_EXCEEDED: /);
    expect(failure.message).toContain("3725.0 s");
    expect(failure.message).toContain("3600 s (60 minutes)");
    expect(failure.duration).toBe(3725.04);
    expect(JobFailure.download("timed out").duration).toBeUndefined();
  });
});

describe("the cause is for the log, never for the job", () => {
  it.each([
    ["download", JobFailure.download("network error", leaky)],
    ["ffmpeg", JobFailure.ffmpeg("ffmpeg could not be started: spawn ffmpeg ENOENT", leaky)],
    ["upload", JobFailure.upload("an output file could not be read (EACCES)", leaky)],
    ["internal", JobFailure.internal(leaky)],
    ["an asset's failure", JobFailure.internal(leaky).within('Asset for clip "a" could not be downloaded')],
  ])("%s: the message keeps none of the cause's words, the log line has them", (_, failure) => {
    expect(failure.message).not.toContain("/srv");
    expect(failure.message).not.toContain("10.1.2.3");
    expect(failure.message).not.toContain("permission denied");
    expect(failure.message).not.toMatch(/\n\s+at /);
    expect(failure.cause).toBe(leaky);
    expect(failure.describeCause()).toBe(`Error: ${leaky.message}`);
  });

  it("a failure without a cause has nothing to add to the log", () => {
    expect(JobFailure.sourceRefused("not a valid URL").describeCause()).toBeUndefined();
  });

  it("a cause that is not an Error is told as text", () => {
    expect(JobFailure.internal("socket hang up").describeCause()).toBe("socket hang up");
  });
});

describe("JobFailure.of: what the pipeline reports for anything a job throws", () => {
  it("a JobFailure is itself", () => {
    const failure = JobFailure.download("timed out");
    expect(JobFailure.of(failure)).toBe(failure);
  });

  it("anything else is an internal failure, retried, its own words kept as the cause", () => {
    const err = new TypeError("Cannot read properties of undefined (reading 'path')");
    const failure = JobFailure.of(err);
    expect(failure).toMatchObject({
      kind: "internal",
      retryable: true,
      message: "Encoding failed because of an internal encoder error.",
    });
    expect(failure.describeCause()).toBe("TypeError: Cannot read properties of undefined (reading 'path')");
  });

  it("an error that only looks like a failure (a `retryable` flag patched on) is not trusted", () => {
    const patched = Object.assign(new Error("/srv/work/job-1: broken"), { retryable: false });
    expect(JobFailure.of(patched)).toMatchObject({
      kind: "internal",
      retryable: true,
      message: "Encoding failed because of an internal encoder error.",
    });
  });
});

describe("within: the same failure, told where it happened", () => {
  it("keeps kind, retryability, cause and duration; prefixes the message", () => {
    const inner = JobFailure.download("the source answered HTTP 503", leaky);
    const outer = inner.within('Asset for clip "intro" could not be downloaded');
    expect(outer).toMatchObject({
      kind: "download",
      retryable: true,
      message: 'Asset for clip "intro" could not be downloaded: Download failed: the source answered HTTP 503',
    });
    expect(outer.cause).toBe(leaky);
    expect(JobFailure.durationExceeded(61, 60, "Starter").within("x").duration).toBe(61);
    expect(JobFailure.sourceRefused("not a valid URL").within('Asset for clip "b" was refused').retryable).toBe(false);
  });
});
