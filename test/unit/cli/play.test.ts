import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CliFailure, EXIT } from "../../../cli/exit-codes";
import { assertStreamingPreset } from "../../../cli/play";
import { PRESET_IDS } from "../../../domain/presets/catalogue";
import { vep } from "../../support/cli";

/** Nothing listens here: a command that got as far as a request would fail with exit 10, not 2. */
const api = "http://127.0.0.1:9";

describe("vep encode --play (docs/client-and-cli.md#the-cli)", () => {
  it("takes every streaming preset and one it does not know; refuses the others as a usage error naming them", () => {
    const streams = PRESET_IDS.filter((id) => /^(hls|dash|cmaf|live)_/.test(id));
    expect(streams.length).toBeGreaterThan(0);
    for (const id of streams) expect(() => assertStreamingPreset(id), id).not.toThrow();
    expect(() => assertStreamingPreset("hls_newer_than_this_cli")).not.toThrow();
    for (const id of PRESET_IDS.filter((p) => !streams.includes(p))) {
      let err: unknown;
      try {
        assertStreamingPreset(id);
      } catch (e) {
        err = e;
      }
      expect(err, id).toBeInstanceOf(CliFailure);
      expect(err, id).toMatchObject({
        exitCode: EXIT.usage,
        message: `--play: preset ${id} is not a stream, so it has no playback link; the streaming presets are hls_*, dash_*, cmaf_* and live_*`,
      });
    }
  });

  it("a preset that is not a stream is refused before anything is uploaded or sent", async () => {
    const file = join(await mkdtemp(join(tmpdir(), "vep-play-")), "clip.mp4");
    await writeFile(file, "a local video's bytes");
    const res = await vep(["encode", file, "--preset", "mp4_264_480p", "--play"], { api, key: "spk_test" });
    expect(res.code).toBe(EXIT.usage);
    expect(res.stdout).toBe("");
    expect(res.stderr).toBe(
      "vep: --play: preset mp4_264_480p is not a stream, so it has no playback link; the streaming presets are hls_*, dash_*, cmaf_* and live_*\n",
    );
  });

  it("--help documents it", async () => {
    const res = await vep(["encode", "--help"], { api });
    expect(res.code).toBe(0);
    expect(res.stdout.replace(/\s+/g, " ")).toMatch(
      /--play print the stream's playback link on a line of its own as soon as it plays, while the job encodes, then wait for the job \(implies --wait\)/,
    );
  });
});
