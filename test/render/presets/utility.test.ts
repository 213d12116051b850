import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  FRAME,
  SECONDS,
  SUBTITLES,
  makeSources,
  parseVtt,
  readText,
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

async function zip(presetId: string, input?: string) {
  const { output, outDir } = await render(sources, presetId, input);
  if (output.kind !== "zip") throw new Error("expected a ZIP");
  return { files: output.files, outDir };
}

describe("util_thumbnails", () => {
  it(`five 640x360 JPEGs (the fewest) for a ${SECONDS} s source`, async () => {
    const { files, outDir } = await zip("util_thumbnails");
    expect(files).toEqual(["thumb_001.jpg", "thumb_002.jpg", "thumb_003.jpg", "thumb_004.jpg", "thumb_005.jpg"]);
    for (const file of files)
      expect(await streamOf(join(outDir, file), "video")).toMatchObject({
        codec_name: "mjpeg",
        width: 640,
        height: 360,
      });
  });
});

describe("util_sprite_vtt", () => {
  it("one sheet, and every WebVTT cue points inside it and covers the source in order", async () => {
    const { files, outDir } = await zip("util_sprite_vtt");
    expect(files).toEqual(["sprite.jpg", "sprite.vtt"]);
    const sheet = await streamOf(join(outDir, "sprite.jpg"), "video");
    // One 160x90 tile a second, ten to a row.
    expect(sheet).toMatchObject({ codec_name: "mjpeg", width: 160 * Math.min(SECONDS, 10), height: 90 });
    const cues = parseVtt(await readText(join(outDir, "sprite.vtt")));
    expect(cues).toHaveLength(SECONDS);
    cues.forEach((cue, i) => {
      const [name, fragment] = cue.text.split("#xywh=");
      expect(name).toBe("sprite.jpg");
      const [x, y, w, h] = fragment.split(",").map(Number);
      expect(x + w).toBeLessThanOrEqual(sheet.width!);
      expect(y + h).toBeLessThanOrEqual(sheet.height!);
      expect(cue.start).toBe(i === 0 ? 0 : cues[i - 1].end);
    });
    expect(cues.at(-1)!.end).toBe(SECONDS);
  });
});

describe("util_subs_sidecar_basic", () => {
  it("an H.264 MP4 and one valid WebVTT per text track, with & and < escaped and timings kept", async () => {
    const { files, outDir } = await zip("util_subs_sidecar_basic", sources.subtitled);
    expect(files).toEqual(["subtitle_1.eng.vtt", "subtitle_2.fra.vtt", "video.mp4"]);
    const video = await streamOf(join(outDir, "video.mp4"), "video");
    expect(video).toMatchObject({ codec_name: "h264", width: 1280, height: 720 });
    expect(Math.abs(Number(video.duration) - SECONDS)).toBeLessThanOrEqual(FRAME);
    const boxes = await topLevelBoxes(join(outDir, "video.mp4"));
    expect(boxes.indexOf("moov")).toBeLessThan(boxes.indexOf("mdat"));

    const eng = await readText(join(outDir, "subtitle_1.eng.vtt"));
    expect(eng.startsWith("WEBVTT")).toBe(true);
    expect(parseVtt(eng).map((c) => c.text)).toEqual(["Tom &amp; Jerry <i>run</i>", "R&amp;D at 5 &lt; 6"]);
    const fra = parseVtt(await readText(join(outDir, "subtitle_2.fra.vtt")));
    expect(fra.map((c) => c.text)).toEqual(["Bonjour &amp; salut"]);
    for (const [cues, expected] of [
      [parseVtt(eng), SUBTITLES.eng],
      [fra, SUBTITLES.fra],
    ] as const) {
      cues.forEach((cue, i) => {
        expect(Math.abs(cue.start - expected[i].start)).toBeLessThanOrEqual(0.025);
        expect(Math.abs(cue.end - expected[i].end)).toBeLessThanOrEqual(0.025);
      });
    }
  });
});
