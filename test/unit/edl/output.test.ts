import { describe, expect, it } from "vitest";
import { validateEdl } from "../../../domain/edl/validate";
import { errorsOf, withOutput } from "./fixtures";

const outputOf = (output: unknown) => validateEdl(withOutput(output), "free").edl?.output;

describe("contract §3.11 Output settings (all optional)", () => {
  it("an absent output gets the defaults: H.264/AAC in MP4 at veryfast, CRF 23; size and rate left to the first clip", () => {
    expect(outputOf(undefined)).toEqual({
      container: "mp4",
      videoCodec: "libx264",
      audioCodec: "aac",
      audioBitrate: "128k",
      preset: "veryfast",
      crf: 23,
    });
  });

  it("output must be an object", () => {
    expect(errorsOf(withOutput("mp4"))).toEqual(["output: must be an object"]);
  });

  it("every field at a valid value is carried through", () => {
    expect(
      outputOf({
        resolution: "1280x720",
        fps: 29.97,
        container: "mkv",
        videoCodec: "libx265",
        audioCodec: "opus",
        videoBitrate: "2500k",
        audioBitrate: "96k",
        preset: "slow",
        crf: 20,
      }),
    ).toEqual({
      resolution: { width: 1280, height: 720 },
      fps: 29.97,
      container: "mkv",
      videoCodec: "libx265",
      audioCodec: "opus",
      videoBitrate: "2500k",
      audioBitrate: "96k",
      preset: "slow",
      crf: 20,
    });
  });
});

describe("contract §3.11 Output settings › enumerations", () => {
  it.each(["mp4", "webm", "mov", "mkv"])("container %s is accepted", (container) => {
    expect(errorsOf(withOutput({ container }))).toEqual([]);
  });

  it("container outside mp4, webm, mov, mkv is rejected", () => {
    expect(errorsOf(withOutput({ container: "avi" }))).toEqual([
      "output.container: must be one of mp4, webm, mov, mkv",
    ]);
  });

  it("videoCodec outside libx264, libx265, libvpx-vp9 is rejected", () => {
    expect(errorsOf(withOutput({ videoCodec: "h264" }))).toEqual([
      "output.videoCodec: must be one of libx264, libx265, libvpx-vp9",
    ]);
  });

  it("audioCodec outside aac, mp3, opus is rejected", () => {
    expect(errorsOf(withOutput({ audioCodec: "flac" }))).toEqual(["output.audioCodec: must be one of aac, mp3, opus"]);
  });

  it.each(["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow"])(
    "preset %s is accepted",
    (preset) => expect(errorsOf(withOutput({ preset }))).toEqual([]),
  );

  it("preset outside ultrafast through veryslow is rejected", () => {
    expect(errorsOf(withOutput({ preset: "placebo" }))).toEqual([
      "output.preset: must be one of ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow",
    ]);
  });
});

describe("contract §3.11 Output settings › resolution, width x height", () => {
  it.each(["1920x1080", "1280x720", "1080x1920", "426x240", "16x16", "7680x4320"])("%s is accepted", (resolution) => {
    expect(errorsOf(withOutput({ resolution }))).toEqual([]);
  });

  it.each([
    "1281x720",
    "1280x721",
    "0x0",
    "14x14",
    "7682x4320",
    "1280*720",
    "1280X720",
    "720p",
    "-1280x720",
    " 1280x720",
    1280,
  ])("decision: %j is rejected (even sides from 16 to 7680, for yuv420p)", (resolution) => {
    expect(errorsOf(withOutput({ resolution }))).toEqual([
      'output.resolution: must be WIDTHxHEIGHT with even numbers from 16 to 7680, such as "1280x720"',
    ]);
  });
});

describe("contract §3.11 Output settings › bitrates, a number followed by k", () => {
  it.each(["50k", "2500k", "100000k"])("videoBitrate %s is accepted", (videoBitrate) => {
    expect(errorsOf(withOutput({ videoBitrate }))).toEqual([]);
  });

  it.each(["2500", "2.5M", "2500K", "0k", "49k", "100001k", "k", 2500, "02500k"])(
    "videoBitrate %j is rejected",
    (videoBitrate) => {
      expect(errorsOf(withOutput({ videoBitrate }))).toEqual([
        'output.videoBitrate: must be a bitrate such as "2500k", from 50k to 100000k',
      ]);
    },
  );

  it.each(["8k", "128k", "512k"])("audioBitrate %s is accepted", (audioBitrate) => {
    expect(errorsOf(withOutput({ audioBitrate }))).toEqual([]);
  });

  it.each(["128", "7k", "513k", 128])("audioBitrate %j is rejected", (audioBitrate) => {
    expect(errorsOf(withOutput({ audioBitrate }))).toEqual([
      'output.audioBitrate: must be a bitrate such as "128k", from 8k to 512k',
    ]);
  });

  it("decision: a bitrate without crf means bitrate control, so no default CRF is added", () => {
    expect(outputOf({ videoBitrate: "3000k" })).not.toHaveProperty("crf");
    expect(outputOf({ videoBitrate: "3000k", crf: 20 })).toMatchObject({ videoBitrate: "3000k", crf: 20 });
  });
});

describe("contract §3.11 Output settings › fps (decision: 1 to 120)", () => {
  it.each([1, 23.976, 60, 120])("fps %s is accepted", (fps) => {
    expect(errorsOf(withOutput({ fps }))).toEqual([]);
  });

  it.each([0, -30, 0.5, 121, 1000])("fps %s is rejected", (fps) => {
    expect(errorsOf(withOutput({ fps }))).toEqual(["output.fps: must be between 1 and 120"]);
  });

  it('fps "30" is not a number', () => {
    expect(errorsOf(withOutput({ fps: "30" }))).toEqual(["output.fps: must be a number"]);
  });
});

describe("contract §3.11 Output settings › crf (decision: the encoder's own range)", () => {
  it("0 to 51 for libx264 and libx265", () => {
    expect(errorsOf(withOutput({ crf: 0 }))).toEqual([]);
    expect(errorsOf(withOutput({ crf: 51, videoCodec: "libx265" }))).toEqual([]);
    expect(errorsOf(withOutput({ crf: 52 }))).toEqual(["output.crf: must be between 0 and 51 for libx264"]);
    expect(errorsOf(withOutput({ crf: -1 }))).toEqual(["output.crf: must be at least 0"]);
  });

  it("0 to 63 for libvpx-vp9", () => {
    expect(errorsOf(withOutput({ crf: 63, videoCodec: "libvpx-vp9" }))).toEqual([]);
    expect(errorsOf(withOutput({ crf: 64, videoCodec: "libvpx-vp9" }))).toEqual([
      "output.crf: must be between 0 and 63 for libvpx-vp9",
    ]);
  });

  it("each codec gets its own default CRF", () => {
    expect(outputOf({ videoCodec: "libx265" })?.crf).toBe(28);
    expect(outputOf({ videoCodec: "libvpx-vp9" })?.crf).toBe(31);
  });
});

describe("contract §3.11 Output settings › codec and container compatibility (decision: FFmpeg's muxers)", () => {
  const videoCodecs = ["libx264", "libx265", "libvpx-vp9"];
  const audioCodecs = ["aac", "mp3", "opus"];
  const accepted: Record<string, string[]> = {
    mp4: [...videoCodecs, ...audioCodecs],
    mkv: [...videoCodecs, ...audioCodecs],
    webm: ["libvpx-vp9", "opus"],
    mov: ["libx264", "libx265", "aac", "mp3"],
  };

  for (const [container, codecs] of Object.entries(accepted)) {
    for (const videoCodec of videoCodecs) {
      it(`${container} ${codecs.includes(videoCodec) ? "takes" : "refuses"} ${videoCodec}`, () => {
        const errors = errorsOf(
          withOutput({ container, videoCodec, audioCodec: container === "webm" ? "opus" : "aac" }),
        );
        expect(errors.length === 0).toBe(codecs.includes(videoCodec));
      });
    }
    for (const audioCodec of audioCodecs) {
      it(`${container} ${codecs.includes(audioCodec) ? "takes" : "refuses"} ${audioCodec}`, () => {
        const errors = errorsOf(
          withOutput({ container, audioCodec, videoCodec: container === "webm" ? "libvpx-vp9" : "libx264" }),
        );
        expect(errors.length === 0).toBe(codecs.includes(audioCodec));
      });
    }
  }

  it("the error names the container and what it takes", () => {
    expect(errorsOf(withOutput({ container: "webm", videoCodec: "libx264", audioCodec: "aac" }))).toEqual([
      "output.videoCodec: libx264 cannot be stored in webm (webm takes libvpx-vp9)",
      "output.audioCodec: aac cannot be stored in webm (webm takes opus)",
    ]);
  });

  it("decision: webm alone defaults to VP9 and Opus", () => {
    expect(outputOf({ container: "webm" })).toMatchObject({ videoCodec: "libvpx-vp9", audioCodec: "opus", crf: 31 });
  });
});
