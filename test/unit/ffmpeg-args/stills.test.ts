import { describe, expect, it } from "vitest";
import { buildPresetCommands } from "../../../encoder/ffmpeg/args";
import { spriteGrid, thumbnailFrames } from "../../../encoder/ffmpeg/args/stills";
import { escapeVttCueText, spriteVtt, vttTimestamp } from "../../../encoder/ffmpeg/args/webvtt";
import { PRESET_DEFINITIONS } from "../../../domain/presets/definitions";
import { HEAD, IN, OUT, PROBE_1080, flagValue } from "./fixtures";

const THUMBS = PRESET_DEFINITIONS.util_thumbnails.recipe;
const SPRITE = PRESET_DEFINITIONS.util_sprite_vtt.recipe;
const build = (id: string, probe = PROBE_1080) => buildPresetCommands(id, { input: IN, outDir: OUT, probe });

describe("util_thumbnails", () => {
  it("selects evenly spaced exact frames, passes them through, numbered JPEGs", () => {
    const plan = build("util_thumbnails");
    const step = plan.steps[0];
    expect(step.kind === "run" && step.command.args).toEqual([
      ...HEAD,
      "-map",
      "0:0",
      "-vf",
      "select='eq(n,30)+eq(n,90)+eq(n,150)+eq(n,210)+eq(n,270)',scale=w='min(640,iw)':h=-2",
      "-fps_mode",
      "passthrough",
      "-frames:v",
      "5",
      "-q:v",
      "3",
      `${OUT}/thumb_%03d.jpg`,
    ]);
    expect(plan.output).toEqual({ kind: "zip" });
  });

  it("counts one per 10 s, at least 5, at most 30, never more than the frames", () => {
    expect(thumbnailFrames(THUMBS, 4, 120)).toHaveLength(5);
    expect(thumbnailFrames(THUMBS, 120, 3600)).toHaveLength(12);
    expect(thumbnailFrames(THUMBS, 3600, 108000)).toHaveLength(30);
    expect(thumbnailFrames(THUMBS, 0.1, 3)).toEqual([0, 1, 2]);
  });
});

describe("util_sprite_vtt", () => {
  it("tiles one frame per second into a grid and writes the matching WebVTT", () => {
    const plan = build("util_sprite_vtt");
    expect(plan.steps).toHaveLength(2);
    const [run, write] = plan.steps;
    expect(run.kind === "run" && run.command.args).toEqual([
      ...HEAD,
      "-map",
      "0:0",
      "-vf",
      "select='not(mod(n,30))',scale=160:90,setsar=1,tile=10x1",
      "-fps_mode",
      "passthrough",
      "-frames:v",
      "1",
      "-update",
      "1",
      "-q:v",
      "4",
      `${OUT}/sprite.jpg`,
    ]);
    expect(write.kind === "write-text" && write.file).toBe("sprite.vtt");
    expect(write.kind === "write-text" && write.text.split("\n").slice(0, 9)).toEqual([
      "WEBVTT",
      "",
      "00:00:00.000 --> 00:00:01.000",
      "sprite.jpg#xywh=0,0,160,90",
      "",
      "00:00:01.000 --> 00:00:02.000",
      "sprite.jpg#xywh=160,0,160,90",
      "",
      "00:00:02.000 --> 00:00:03.000",
    ]);
  });

  it("spreads long sources over at most 100 tiles on one sheet, wrapping rows", () => {
    const grid = spriteGrid(SPRITE, 3600, 25, 90000, 1920, 1080);
    expect(grid).toMatchObject({ frameStep: 900, tiles: 100, columns: 10, rows: 10, tileWidth: 160, tileHeight: 90 });
    expect(grid.cues[11]).toEqual({ start: 396, end: 432, x: 160, y: 90, width: 160, height: 90 });
    expect(grid.cues[99].end).toBe(3600);
  });

  it("portrait sources get portrait tiles; the last cue ends at the duration", () => {
    const grid = spriteGrid(SPRITE, 2.5, 30, 75, 720, 1280);
    expect(grid).toMatchObject({ frameStep: 30, tiles: 3, columns: 3, rows: 1, tileWidth: 160, tileHeight: 284 });
    expect(grid.cues.at(-1)).toMatchObject({ start: 2, end: 2.5, x: 320 });
  });
});

describe("WebVTT writer", () => {
  it("formats timestamps with hours and milliseconds", () => {
    expect(vttTimestamp(0)).toBe("00:00:00.000");
    expect(vttTimestamp(3723.4567)).toBe("01:02:03.457");
  });

  it("writes one cue per tile", () => {
    expect(
      spriteVtt("s.jpg", [
        { start: 0, end: 1.5, x: 0, y: 0, width: 160, height: 90 },
        { start: 1.5, end: 3, x: 160, y: 0, width: 160, height: 90 },
      ]),
    ).toBe(
      "WEBVTT\n\n00:00:00.000 --> 00:00:01.500\ns.jpg#xywh=0,0,160,90\n\n00:00:01.500 --> 00:00:03.000\ns.jpg#xywh=160,0,160,90\n",
    );
  });

  it("escapes raw & and < in cue text, keeping references, tags and the header", () => {
    const raw =
      "WEBVTT\n\n00:00.500 --> 00:01.500\nTom & Jerry <i>run</i>\nR&D &amp; a < b &#38; &#x26;\n\nNOTE & stays\n";
    expect(escapeVttCueText(raw)).toBe(
      "WEBVTT\n\n00:00.500 --> 00:01.500\nTom &amp; Jerry <i>run</i>\nR&amp;D &amp; a &lt; b &#38; &#x26;\n\nNOTE & stays\n",
    );
  });

  it("keeps tags with annotations and timestamps, and escapes a tag cut short by another", () => {
    const cue = (text: string) => escapeVttCueText(`WEBVTT\n\n00:00.000 --> 00:01.000\n${text}\n`).split("\n")[3];
    expect(cue("<v.loud Mary>Hi</v> <c.a.b>x</c> <00:00.500>y <lang en-GB>z</lang>")).toBe(
      "<v.loud Mary>Hi</v> <c.a.b>x</c> <00:00.500>y <lang en-GB>z</lang>",
    );
    expect(cue("<c.a <b>bold</b>")).toBe("&lt;c.a <b>bold</b>");
    expect(cue("&amp &amp; &#12 &#x1F;")).toBe("&amp;amp &amp; &amp;#12 &#x1F;");
  });

  it("reads a cue a megabyte long of would-be tags and references in one pass (a subtitle track can carry one)", () => {
    // Each "<c." read to the end of the line would freeze the encoder (docs/reliability.md#defects-found-and-fixed).
    const line = "<c.&a".repeat(200_000);
    const escaped = escapeVttCueText(`WEBVTT\n\n00:00.000 --> 00:01.000\n${line}\n`);
    expect(escaped.split("\n")[3]).toBe("&lt;c.&amp;a".repeat(200_000));
  });
});

describe("util_subs_sidecar_basic", () => {
  it("re-encodes the MP4 (no upscale) and writes one WebVTT per TEXT track, skipping bitmap tracks", () => {
    const plan = build("util_subs_sidecar_basic");
    const [run, escapeVtt] = plan.steps;
    expect(run.kind === "run" && run.command.args).toEqual([
      ...HEAD,
      "-map",
      "0:0",
      "-map",
      "0:1",
      "-vf",
      "scale=w='min(1920,iw)':h='min(1080,ih)':force_original_aspect_ratio=decrease:force_divisible_by=2,format=yuv420p",
      "-c:v",
      "libx264",
      "-preset",
      "veryfast",
      "-crf",
      "23",
      "-c:a",
      "aac",
      "-ar",
      "48000",
      "-ac",
      "2",
      "-b:a",
      "128k",
      "-movflags",
      "+faststart",
      `${OUT}/video.mp4`,
      "-map",
      "0:2",
      "-c:s",
      "webvtt",
      "-f",
      "webvtt",
      `${OUT}/subtitle_1.eng.vtt`,
      "-map",
      "0:4",
      "-c:s",
      "webvtt",
      "-f",
      "webvtt",
      `${OUT}/subtitle_2.fra.vtt`,
    ]);
    expect(escapeVtt).toEqual({ kind: "escape-vtt", files: ["subtitle_1.eng.vtt", "subtitle_2.fra.vtt"] });
  });

  it("a source with no text track yields the MP4 alone", () => {
    const plan = build("util_subs_sidecar_basic", { ...PROBE_1080, subtitles: [] });
    expect(plan.steps).toHaveLength(1);
    const run = plan.steps[0];
    expect(run.kind === "run" && flagValue(run.command.args, "-c:s")).toBeUndefined();
  });
});
