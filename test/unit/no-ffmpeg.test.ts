import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { runFfmpeg } from "../../encoder/ffmpeg/run";

describe("the unit project runs no FFmpeg (its setup, no-ffmpeg-setup.ts)", () => {
  it("refuses to start ffmpeg or ffprobe, from a test or from the encoder's own runner", async () => {
    expect(() => spawn("ffmpeg", ["-version"])).toThrow(/belongs under test\/render/);
    await expect(async () => promisify(execFile)("/usr/bin/ffprobe", ["-version"])).rejects.toThrow(
      /belongs under test\/render/,
    );
    await expect(runFfmpeg(["-version"])).rejects.toThrow(/belongs under test\/render/);
  });

  it("starts anything else as before", async () => {
    expect((await promisify(execFile)(process.execPath, ["-e", "console.log('ran')"])).stdout).toBe("ran\n");
  });
});
