import { describe, expect, it } from "vitest";
import type { ProbeSummary } from "../../../encoder/ffmpeg/probe";
import {
  describeProbe,
  ffmpegSpeed,
  formatBytes,
  formatStage,
  isJobStageLine,
  playableJobOf,
} from "../../../encoder/jobs/stage-log";

const id = "5b0f3c1e-8d2a-4c1b-9e7f-0a1b2c3d4e5f";
const on = { encoder: "encoder-1" };
const probe: ProbeSummary = {
  duration: 12.04,
  video: { index: 0, codec: "h264", width: 1280, height: 720, sampleAspect: 1, fps: 29.97002997, frameCount: 361 },
  audio: [{ index: 1, codec: "aac", channels: 2, sampleRate: 48000, language: null }],
  subtitles: [{ index: 2, codec: "subrip", language: "en", textBased: true }],
};

describe("job stage lines", () => {
  it("one readable line per stage, each starting with the job id and the stage in a column, then the encoder it ran on", () => {
    expect(formatStage(id, { stage: "claim", attempt: 0, attempts: 3, preset: "mp4_264_720p" }, on)).toBe(
      `job ${id}  claim      on encoder-1  attempt 1 of 3, preset mp4_264_720p`,
    );
    expect(formatStage(id, { stage: "download", bytes: 8_811_520, seconds: 0.623 }, on)).toBe(
      `job ${id}  download   on encoder-1  8.4 MiB in 0.62 s`,
    );
    expect(formatStage(id, { stage: "download", bytes: 2048, seconds: 12.34, asset: 'clip "intro"' }, on)).toBe(
      `job ${id}  download   on encoder-1  clip "intro": 2.0 KiB in 12.3 s`,
    );
    expect(formatStage(id, { stage: "probe", probe }, on)).toBe(
      `job ${id}  probe      on encoder-1  12.0 s; video h264 1280x720 29.97 fps; audio aac 2 ch 48 kHz; 1 subtitle track`,
    );
    expect(formatStage(id, { stage: "ffmpeg-start", mediaSeconds: 12.04 }, on)).toBe(
      `job ${id}  ffmpeg     on encoder-1  started on 12.0 s of media`,
    );
    expect(formatStage(id, { stage: "ffmpeg-end", mediaSeconds: 12, wallSeconds: 5 }, on)).toBe(
      `job ${id}  ffmpeg     on encoder-1  finished in 5.00 s, speed=2.40x`,
    );
    expect(formatStage(id, { stage: "upload", bytes: 512, seconds: 0.05 }, on)).toBe(
      `job ${id}  upload     on encoder-1  512 B in 0.05 s`,
    );
    expect(formatStage(id, { stage: "completed", seconds: 7.25 }, on)).toBe(
      `job ${id}  completed  on encoder-1  in 7.25 s`,
    );
    expect(formatStage(id, { stage: "cancelled", status: "cancelled" }, on)).toBe(
      `job ${id}  cancelled  on encoder-1  the job is cancelled; work stopped`,
    );
  });

  it("a split job's part is named, counted from 1, between the job id and the stage", () => {
    expect(
      formatStage(
        id,
        { stage: "download", bytes: 8_811_520, seconds: 0.623 },
        { encoder: "e784079b449483", part: { index: 1, count: 4 } },
      ),
    ).toBe(`job ${id}  part 2/4  download   on e784079b449483  8.4 MiB in 0.62 s`);
    expect(
      isJobStageLine(
        formatStage(id, { stage: "completed", seconds: 1 }, { encoder: "encoder-2", part: { index: 0, count: 12 } }),
      ),
    ).toBe(true);
  });

  it("a split job's audio task is named `audio`", () => {
    expect(
      formatStage(id, { stage: "completed", seconds: 1.5 }, { encoder: "encoder-1", part: { index: 4, count: 4 } }),
    ).toMatch(new RegExp(`^job ${id}  audio  completed +on encoder-1  `));
  });

  it("a stream's playable line names its job, whole or from a part, and no other line does", () => {
    const whole = formatStage(id, { stage: "playable" }, on);
    expect(whole).toBe(
      `job ${id}  playable   on encoder-1  the first segments are stored: the job's playbackUrl plays while it encodes`,
    );
    expect(playableJobOf(whole)).toBe(id);
    expect(playableJobOf(formatStage(id, { stage: "playable" }, { encoder: "e1", part: { index: 0, count: 6 } }))).toBe(
      id,
    );
    expect(playableJobOf(formatStage(id, { stage: "playable" }, { encoder: "e1", part: { index: 6, count: 6 } }))).toBe(
      id,
    );
    expect(playableJobOf(formatStage(id, { stage: "completed", seconds: 1 }, on))).toBeUndefined();
    expect(playableJobOf(formatStage(id, { stage: "error", message: "playable whatever" }, on))).toBeUndefined();
    expect(playableJobOf(`[worker] job ${id}  playable   on encoder-1`)).toBeUndefined();
  });

  it("a failure says whether it will be retried, with the reason the job shows and any hidden cause", () => {
    expect(
      formatStage(
        id,
        {
          stage: "failed",
          reason: "Download failed: the source answered HTTP 503",
          final: false,
          attempt: 0,
          attempts: 3,
        },
        on,
      ),
    ).toBe(
      `job ${id}  failed     on encoder-1  attempt 1 of 3, will be retried: Download failed: the source answered HTTP 503`,
    );
    expect(
      formatStage(
        id,
        {
          stage: "failed",
          reason: "Encoding failed because of an internal encoder error.",
          cause: "TypeError: x is not a function",
          final: true,
          attempt: 2,
          attempts: 3,
        },
        on,
      ),
    ).toBe(
      `job ${id}  failed     on encoder-1  attempt 3 of 3, not retried: Encoding failed because of an internal encoder error. [cause: TypeError: x is not a function]`,
    );
  });

  it("speed is media seconds per wall second, like FFmpeg's own speed=", () => {
    expect(ffmpegSpeed(60, 26.1)).toBe("speed=2.30x");
    expect(ffmpegSpeed(0, 3)).toBe("speed=n/a");
    expect(ffmpegSpeed(10, 0)).toBe("speed=n/a");
  });

  it("sizes in binary units", () => {
    expect([0, 1023, 1024, 1536, 5 * 1024 ** 3].map(formatBytes)).toEqual([
      "0 B",
      "1023 B",
      "1.0 KiB",
      "1.5 KiB",
      "5.0 GiB",
    ]);
  });

  it("an audio-only probe lists what is there", () => {
    expect(
      describeProbe({
        duration: 61,
        video: null,
        audio: [{ index: 0, codec: "mp3", channels: 1, sampleRate: 44100, language: null }],
        subtitles: [],
      }),
    ).toBe("61.0 s; audio mp3 1 ch 44.1 kHz");
  });

  it("the dev runner recognises these lines and no others", () => {
    expect(isJobStageLine(formatStage(id, { stage: "completed", seconds: 1 }, on))).toBe(true);
    expect(isJobStageLine(formatStage(id, { stage: "error", message: "boom" }, on))).toBe(true);
    expect(isJobStageLine('{"level":"info","msg":"encoder listening"}')).toBe(false);
    expect(isJobStageLine(`job ${id.slice(0, 8)}  claim  x`)).toBe(false);
    expect(isJobStageLine(`the job ${id}  claim`)).toBe(false);
  });
});
