import { afterAll, beforeAll, expect, it } from "vitest";
import { ffprobe, makeSources, render, type Sources } from "./media";

let sources: Sources;
beforeAll(async () => {
  sources = await makeSources();
});
afterAll(() => sources?.cleanup());

// Each single-file video preset's output is probed end to end, through the service
// (test/e2e/presets.test.ts): codec and sample entry, size, audio, duration and faststart.
// Encoding them here as well took half a minute of the suite for nothing more.
it("a video preset on a source without audio makes a video-only file", async () => {
  const { output } = await render(sources, "mp4_264_240p", sources.videoOnly);
  if (output.kind !== "file") throw new Error("expected a single file");
  const { streams } = await ffprobe(output.path);
  expect(streams.map((s) => s.codec_type)).toEqual(["video"]);
});
