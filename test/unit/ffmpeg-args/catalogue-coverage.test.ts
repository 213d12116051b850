import { describe, expect, it } from "vitest";
import { PRESETS } from "../../../domain/presets/catalogue";
import { PRESET_DEFINITIONS, findDefinition } from "../../../domain/presets/definitions";
import { streamRecipe } from "../../../domain/stream/layout";
import { buildPresetCommands, type FfmpegCommand } from "../../../encoder/ffmpeg/args";
import { parseLoudnormMeasurement } from "../../../encoder/ffmpeg/args/loudness";
import { wholeStreamCommand } from "../../../encoder/ffmpeg/args/stream";
import { IN, MAX_PICTURE, OUT, PROBE_1080, flagValue } from "./fixtures";

const MEASURED = parseLoudnormMeasurement(
  '{"input_i":"-20","input_tp":"-5","input_lra":"4","input_thresh":"-30","target_offset":"0.1"}',
);

/**
 * Every FFmpeg command a preset runs (a two-pass step's apply built from a sample measurement); a
 * streaming preset's, the whole stream's in one run (its parts' are ladder.test.ts's).
 */
function commandsOf(id: string): FfmpegCommand[] {
  const stream = streamRecipe(id);
  if (stream) return [wholeStreamCommand({ presetId: id, input: IN, outDir: OUT, probe: PROBE_1080 }, stream, 0)];
  return buildPresetCommands(id, { input: IN, outDir: OUT, probe: PROBE_1080 }).steps.flatMap((s) =>
    s.kind === "run" ? [s.command] : s.kind === "two-pass" ? [s.measure, s.apply(MEASURED)] : [],
  );
}

describe("all 23 presets", () => {
  it("each catalogue entry is a definition with its recipe, and there is no other definition", () => {
    expect(Object.keys(PRESET_DEFINITIONS)).toEqual(PRESETS.map((p) => p.id));
    for (const p of PRESETS) expect(findDefinition(p.id)?.recipe.kind, p.id).toBeDefined();
    expect(findDefinition("constructor")).toBeUndefined();
  });

  describe.each(PRESETS.map((p) => [p.id, p] as const))("%s", (id, preset) => {
    const commands = commandsOf(id);

    it("reads only the local file, decodes no picture over the size limit, and reports progress", () => {
      expect(commands.length).toBeGreaterThan(0);
      for (const { args } of commands) {
        expect(args.slice(0, 9)).toEqual([
          "-hide_banner",
          "-nostdin",
          "-y",
          "-protocol_whitelist",
          "file",
          "-max_pixels",
          MAX_PICTURE,
          "-i",
          IN,
        ]);
        expect(args.filter((a) => a === "-i")).toHaveLength(1);
        expect(flagValue(args, "-progress")).toBe("pipe:1");
        expect(args).toContain("-nostats");
        expect(args.join(" ")).not.toMatch(/https?:/);
      }
    });

    it("encodes with the catalogue's codecs", () => {
      const last = commands.at(-1)!.args;
      const { videoCodec, audioCodec } = preset.specifications;
      if (videoCodec && videoCodec !== "mjpeg") expect(flagValue(last, "-c:v")).toBe(videoCodec);
      if (audioCodec) expect(flagValue(last, "-c:a")).toBe(audioCodec);
    });

    if (preset.specifications.resolution) {
      it("encodes at the catalogue's resolution, CRF and maxrate (a 16:9 source fills the box)", () => {
        const { resolution, crf, maxrate } = preset.specifications;
        const args = commands.at(-1)!.args;
        expect(flagValue(args, "-vf")).toMatch(new RegExp(`^scale=${resolution!.replace("x", ":")}[,:]`));
        expect(flagValue(args, "-crf")).toBe(String(crf));
        const cap = flagValue(args, "-c:v") === "libvpx-vp9" ? flagValue(args, "-b:v") : flagValue(args, "-maxrate");
        expect(cap).toBe(maxrate);
      });
    }

    it("writes into the out dir, with the form the catalogue states", () => {
      const outputs = commands.at(-1)!.args.filter((a) => a.startsWith("/"));
      expect(outputs.filter((a) => a !== IN).every((a) => a.startsWith(`${OUT}/`))).toBe(true);
      if (streamRecipe(id)) {
        // A stream's files go into the ZIP as well when the job completes (docs/playback.md).
        expect(preset.output).toBe("zip");
        return;
      }
      const plan = buildPresetCommands(id, { input: IN, outDir: OUT, probe: PROBE_1080 });
      expect(plan.output.kind).toBe(preset.output);
      if (plan.output.kind === "file") expect(commands.at(-1)!.args.at(-1)).toBe(`${OUT}/${plan.output.file}`);
    });

    if (preset.extension === "mp4") {
      it("MP4 output is faststart; HEVC is tagged hvc1", () => {
        const last = commands.at(-1)!.args;
        expect(flagValue(last, "-movflags")).toBe("+faststart");
        if (flagValue(last, "-c:v") === "libx265") expect(flagValue(last, "-tag:v")).toBe("hvc1");
      });
    }
  });
});
