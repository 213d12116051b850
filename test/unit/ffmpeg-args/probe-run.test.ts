import { describe, expect, it } from "vitest";
import { JobFailure } from "../../../encoder/failure";
import { MAX_PICTURE_PIXELS } from "../../../encoder/ffmpeg/picture-limits";
import { parseProbe } from "../../../encoder/ffmpeg/probe";
import { outTimeFromProgressLine, sanitizeFfmpegLog } from "../../../encoder/ffmpeg/run";

const stream = (s: object) => ({ disposition: { attached_pic: 0 }, ...s });

describe("parseProbe", () => {
  it("summarises duration, the video, audio and subtitle streams", () => {
    const summary = parseProbe({
      format: { duration: "12.480000" },
      streams: [
        stream({
          index: 0,
          codec_type: "video",
          codec_name: "h264",
          width: 1920,
          height: 1080,
          avg_frame_rate: "30000/1001",
          nb_frames: "374",
        }),
        stream({
          index: 1,
          codec_type: "audio",
          codec_name: "aac",
          channels: 6,
          sample_rate: "48000",
          tags: { language: "eng" },
        }),
        stream({ index: 2, codec_type: "subtitle", codec_name: "subrip", tags: { language: "fra" } }),
        stream({ index: 3, codec_type: "subtitle", codec_name: "hdmv_pgs_subtitle", tags: { language: "und" } }),
      ],
    });
    expect(summary).toEqual({
      duration: 12.48,
      video: {
        index: 0,
        codec: "h264",
        width: 1920,
        height: 1080,
        sampleAspect: 1,
        fps: 30000 / 1001,
        frameCount: 374,
      },
      audio: [{ index: 1, codec: "aac", channels: 6, sampleRate: 48000, language: "eng" }],
      subtitles: [
        { index: 2, codec: "subrip", language: "fra", textBased: true },
        { index: 3, codec: "hdmv_pgs_subtitle", language: null, textBased: false },
      ],
    });
  });

  it("swaps the size of a rotated phone video and ignores cover art", () => {
    const summary = parseProbe({
      format: { duration: "3" },
      streams: [
        stream({
          index: 0,
          codec_type: "video",
          codec_name: "mjpeg",
          width: 600,
          height: 600,
          disposition: { attached_pic: 1 },
        }),
        stream({
          index: 1,
          codec_type: "video",
          codec_name: "hevc",
          width: 1920,
          height: 1080,
          avg_frame_rate: "0/0",
          r_frame_rate: "30/1",
          side_data_list: [{ rotation: -90 }],
        }),
      ],
    });
    expect(summary.video).toEqual({
      index: 1,
      codec: "hevc",
      width: 1080,
      height: 1920,
      sampleAspect: 1,
      fps: 30,
      frameCount: null,
    });
  });

  it("an audio file with cover art has no video", () => {
    const summary = parseProbe({
      format: { duration: "3" },
      streams: [
        stream({ index: 0, codec_type: "audio", codec_name: "mp3", channels: 1, sample_rate: "44100" }),
        stream({
          index: 1,
          codec_type: "video",
          codec_name: "png",
          width: 500,
          height: 500,
          disposition: { attached_pic: 1 },
        }),
      ],
    });
    expect(summary.video).toBeNull();
    expect(summary.audio).toHaveLength(1);
  });

  it("rejects a file with no duration or no media streams", () => {
    expect(() => parseProbe({ format: {}, streams: [] })).toThrowError(expect.objectContaining({ kind: "ffmpeg" }));
    expect(() =>
      parseProbe({ format: { duration: "2" }, streams: [stream({ index: 0, codec_type: "data" })] }),
    ).toThrowError(/no audio or video/);
  });
});

describe("picture size limits: 8192 a side, 8192x4320 in all", () => {
  const video = (width: number, height: number) =>
    parseProbe({
      format: { duration: "2" },
      streams: [stream({ index: 0, codec_type: "video", codec_name: "h264", width, height })],
    });

  it("accepts DCI 8K either way up", () => {
    expect(video(8192, 4320).video).toMatchObject({ width: 8192, height: 4320 });
    expect(video(4320, 8192).video).toMatchObject({ width: 4320, height: 8192 });
  });

  it.each([
    [16000, 16000],
    [8193, 64],
    [64, 8193],
    [8192, 4321],
    [6000, 6000],
  ])("refuses %ix%i for good, saying both sizes", (width, height) => {
    let err: unknown;
    try {
      video(width, height);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JobFailure);
    expect(err).toMatchObject({
      kind: "source-refused",
      retryable: false,
      message: `Source refused: the video is ${width}x${height} pixels; the largest accepted is 8192 pixels a side and 35.4 megapixels in all (8192x4320).`,
    });
  });

  it("a stream whose decoder refused its picture is refused with the size ffprobe's log gives", () => {
    const raw = {
      format: { duration: "2" },
      streams: [stream({ index: 0, codec_type: "video", codec_name: "png", width: 0, height: 0 })],
    };
    expect(() => parseProbe(raw, ["[png] [IMGUTILS] Picture size 30000x30000 is invalid"])).toThrowError(
      /the video is 30000x30000 pixels/,
    );
    expect(() =>
      parseProbe(raw, [
        `[png] [IMGUTILS] Picture size 16000x9000 exceeds specified max pixel count ${MAX_PICTURE_PIXELS}`,
      ]),
    ).toThrowError(/the video is 16000x9000 pixels/);
  });
});

describe("truncated MP4/MOV files", () => {
  const probe = (formatName: string, size: number) => ({
    format: { duration: "4", format_name: formatName, size: String(size) },
    streams: [
      stream({
        index: 0,
        codec_type: "video",
        codec_name: "h264",
        width: 320,
        height: 240,
        duration: "4",
        bit_rate: "800000",
      }),
      stream({ index: 1, codec_type: "audio", codec_name: "aac", duration: "4", bit_rate: "64000" }),
    ],
  });
  const indexed = ((800_000 + 64_000) * 4) / 8;

  it("an MP4 holding less than its index lists is refused for good", () => {
    const refusal = () => parseProbe(probe("mov,mp4,m4a,3gp,3g2,mj2", indexed / 2));
    expect(refusal).toThrowError(
      JobFailure.sourceRefused(
        "the file is truncated: its index lists 0.4 MiB of media, but the file holds 0.2 MiB in all.",
      ),
    );
    expect(refusal).toThrowError(expect.objectContaining({ kind: "source-refused", retryable: false }));
  });

  it("an intact one passes, as do formats whose bit rates are not counted from an index", () => {
    expect(parseProbe(probe("mov,mp4,m4a,3gp,3g2,mj2", indexed + 4096)).duration).toBe(4);
    expect(parseProbe(probe("matroska,webm", indexed / 2)).duration).toBe(4);
  });
});

describe("runner helpers", () => {
  it("reads out_time_us from -progress lines", () => {
    expect(outTimeFromProgressLine("out_time_us=4010667")).toBe(4010667);
    expect(outTimeFromProgressLine("out_time_us=N/A")).toBeNull();
    expect(outTimeFromProgressLine("out_time_ms=4010667")).toBeNull();
  });

  it("hides the work dir and pointer addresses", () => {
    expect(
      sanitizeFfmpegLog("[libx264 @ 0x55d1db4df3c0] /srv/work/job-1/source.mp4: Invalid data", "/srv/work/job-1"),
    ).toBe("[libx264] <work>/source.mp4: Invalid data");
  });
});
