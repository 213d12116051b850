import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FRAME,
  SECONDS,
  ffprobe,
  integratedLoudness,
  makeSources,
  render,
  streamOf,
  topLevelBoxes,
  type Sources,
} from "./media";

let sources: Sources;
beforeAll(async () => {
  sources = await makeSources();
});
afterAll(() => sources?.cleanup());

async function singleFile(presetId: string, input?: string) {
  const { output } = await render(sources, presetId, input);
  if (output.kind !== "file") throw new Error("expected a single file");
  return output;
}

describe("audio_aac_podcast", () => {
  it("AAC at 48 kHz, −16 LUFS within 1 LU, faststart M4A", async () => {
    const output = await singleFile("audio_aac_podcast");
    expect(output.contentType).toBe("audio/mp4");
    const { streams, format } = await ffprobe(output.path);
    expect(streams.map((s) => s.codec_type)).toEqual(["audio"]);
    expect(streams[0]).toMatchObject({ codec_name: "aac", sample_rate: "48000", channels: 2 });
    expect(Math.abs(Number(streams[0].duration) - SECONDS)).toBeLessThanOrEqual(0.05);
    expect(Math.abs(Number(format.duration) - SECONDS)).toBeLessThanOrEqual(0.1);
    expect(Math.abs((await integratedLoudness(output.path)) - -16)).toBeLessThanOrEqual(1);
    const boxes = await topLevelBoxes(output.path);
    expect(boxes.indexOf("moov")).toBeLessThan(boxes.indexOf("mdat"));
  });

  it("fails clearly on a source without audio", async () => {
    await expect(render(sources, "audio_aac_podcast", sources.videoOnly)).rejects.toMatchObject({
      message: "The source has no audio stream; preset audio_aac_podcast needs one.",
      retryable: false,
    });
  });
});

// The single-file video presets are probed end to end, through the service (test/e2e/presets.test.ts);
// what is left of them here is a source without audio, beside the audio presets' refusal of one.
it("a video preset on a source without audio makes a video-only file", async () => {
  const output = await singleFile("mp4_264_240p", sources.videoOnly);
  const { streams } = await ffprobe(output.path);
  expect(streams.map((s) => s.codec_type)).toEqual(["video"]);
});

describe("audio_mp3_hq", () => {
  it("MP3, stereo, the source's duration", async () => {
    const output = await singleFile("audio_mp3_hq");
    expect(output).toMatchObject({ contentType: "audio/mpeg", fileName: "audio_mp3_hq.mp3" });
    const { streams, format } = await ffprobe(output.path);
    expect(streams.map((s) => s.codec_type)).toEqual(["audio"]);
    const audio = await streamOf(output.path, "audio");
    expect(audio).toMatchObject({ codec_name: "mp3", channels: 2 });
    expect(Math.abs(Number(audio.duration) - SECONDS)).toBeLessThanOrEqual(0.06);
    expect(Math.abs(Number(format.duration) - SECONDS)).toBeLessThanOrEqual(0.1);
  });
});

describe("audio filters keep the picture", () => {
  it("filter_loudnorm_ebu_r128: video copied, audio at −23 LUFS within 1 LU", async () => {
    const output = await singleFile("filter_loudnorm_ebu_r128");
    const source = await streamOf(sources.av, "video");
    const video = await streamOf(output.path, "video");
    expect(video).toMatchObject({
      codec_name: "h264",
      codec_tag_string: "avc1",
      width: 1280,
      height: 720,
      nb_frames: source.nb_frames,
    });
    expect(Math.abs(Number(video.duration) - SECONDS)).toBeLessThanOrEqual(FRAME);
    expect(Math.abs(Number((await ffprobe(output.path)).format.duration) - SECONDS)).toBeLessThanOrEqual(FRAME + 0.05);
    expect(await streamOf(output.path, "audio")).toMatchObject({
      codec_name: "aac",
      sample_rate: "48000",
      channels: 2,
    });
    expect(Math.abs((await integratedLoudness(output.path)) - -23)).toBeLessThanOrEqual(1);
    const boxes = await topLevelBoxes(output.path);
    expect(boxes.indexOf("moov")).toBeLessThan(boxes.indexOf("mdat"));
  });

  it("filter_audio_denoise: video copied, audio denoised to AAC, faststart", async () => {
    const output = await singleFile("filter_audio_denoise");
    const source = await streamOf(sources.av, "video");
    expect(await streamOf(output.path, "video")).toMatchObject({
      codec_name: "h264",
      codec_tag_string: "avc1",
      nb_frames: source.nb_frames,
    });
    const audio = await streamOf(output.path, "audio");
    expect(audio).toMatchObject({ codec_name: "aac", sample_rate: "48000", channels: 2 });
    expect(Math.abs(Number(audio.duration) - SECONDS)).toBeLessThanOrEqual(0.05);
    expect(Math.abs(Number((await ffprobe(output.path)).format.duration) - SECONDS)).toBeLessThanOrEqual(FRAME + 0.05);
    const boxes = await topLevelBoxes(output.path);
    expect(boxes.indexOf("moov")).toBeLessThan(boxes.indexOf("mdat"));
  });
});
