import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FRAME, SECONDS, ffprobe, makeSources, render, streamOf, topLevelBoxes, type Sources } from "./media";

let sources: Sources;
beforeAll(async () => {
  sources = await makeSources();
});
afterAll(() => sources?.cleanup());

describe.each([
  ["mp4_264_240p", "h264", "avc1", 426, 240, "aac"],
  ["mp4_264_480p", "h264", "avc1", 854, 480, "aac"],
  ["mp4_264_720p", "h264", "avc1", 1280, 720, "aac"],
  ["mp4_264_1080p", "h264", "avc1", 1920, 1080, "aac"],
  ["social_264_vertical_1080x1920", "h264", "avc1", 1080, 1920, "aac"],
  ["social_264_square_1080", "h264", "avc1", 1080, 1080, "aac"],
  ["mp4_265_1080p_efficient", "hevc", "hvc1", 1920, 1080, "aac"],
  ["webm_vp9_1080p", "vp9", "[0][0][0][0]", 1920, 1080, "opus"],
] as const)("%s renders", (presetId, videoCodec, tag, width, height, audioCodec) => {
  it(`${videoCodec} ${width}x${height} + ${audioCodec}, the source's duration`, async () => {
    const { output } = await render(sources, presetId);
    if (output.kind !== "file") throw new Error("expected a single file");
    const video = await streamOf(output.path, "video");
    expect(video).toMatchObject({ codec_name: videoCodec, codec_tag_string: tag, width, height });
    const audio = await streamOf(output.path, "audio");
    expect(audio).toMatchObject({ codec_name: audioCodec, sample_rate: "48000", channels: 2 });
    const { format } = await ffprobe(output.path);
    // WebM stores no per-stream duration; both containers carry the overall one.
    expect(Math.abs(Number(video.duration ?? format.duration) - SECONDS)).toBeLessThanOrEqual(FRAME + 1e-6);
    if (output.contentType === "video/mp4") {
      const boxes = await topLevelBoxes(output.path);
      expect(boxes.indexOf("moov")).toBeLessThan(boxes.indexOf("mdat"));
    }
  });
});

it("a video preset on a source without audio makes a video-only file", async () => {
  const { output } = await render(sources, "mp4_264_240p", sources.videoOnly);
  if (output.kind !== "file") throw new Error("expected a single file");
  const { streams } = await ffprobe(output.path);
  expect(streams.map((s) => s.codec_type)).toEqual(["video"]);
});
