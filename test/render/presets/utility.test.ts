import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  asDelivered,
  FRAME,
  SECONDS,
  SUBTITLES,
  ffprobe,
  makeSources,
  parseVtt,
  readText,
  rendered,
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
  const { output, outDir } = await rendered(sources, presetId, input);
  if (output.kind !== "zip") throw new Error("expected a ZIP");
  return { files: output.files, outDir };
}

/** Delivered as one ZIP (contract §3.9): every file a member under its own name, byte for byte. */
async function expectDeliveredWhole(presetId: string, input?: string) {
  const { files, outDir } = await zip(presetId, input);
  const members = await asDelivered(outDir, files);
  expect([...members.keys()].sort()).toEqual([...files].sort());
  for (const file of files) expect(members.get(file)?.equals(await readFile(join(outDir, file))), file).toBe(true);
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

  it("as one ZIP, the five JPEGs", () => expectDeliveredWhole("util_thumbnails"));
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

  it("as one ZIP, the sheet and its WebVTT", () => expectDeliveredWhole("util_sprite_vtt"));
});

describe("util_subs_sidecar_basic", () => {
  it("an H.264 MP4 with the source's AAC and one valid WebVTT per text track, with & and < escaped and timings kept", async () => {
    const { files, outDir } = await zip("util_subs_sidecar_basic", sources.subtitled);
    expect(files).toEqual(["subtitle_1.eng.vtt", "subtitle_2.fra.vtt", "video.mp4"]);
    const video = await streamOf(join(outDir, "video.mp4"), "video");
    expect(video).toMatchObject({ codec_name: "h264", width: 1280, height: 720 });
    expect(Math.abs(Number(video.duration) - SECONDS)).toBeLessThanOrEqual(FRAME);
    // The source's sound beside the picture, and no subtitle stream left in the MP4.
    expect((await ffprobe(join(outDir, "video.mp4"))).streams.map((s) => s.codec_name).sort()).toEqual(["aac", "h264"]);
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

  it("as one ZIP, the MP4 and the WebVTT files", () =>
    expectDeliveredWhole("util_subs_sidecar_basic", sources.subtitled));
});
