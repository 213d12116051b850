import { describe, expect, it } from "vitest";
import { isWorkDirTool } from "../../../encoder/leftovers";

describe("which processes are an encoder's leftovers", () => {
  it("FFmpeg or ffprobe with an argument in one of the WORK_DIR's job dirs", () => {
    const work = "/tmp/encoder";
    expect(isWorkDirTool(["ffmpeg", "-i", "/tmp/encoder/job-1-abc/source", "out"], work)).toBe(true);
    expect(isWorkDirTool(["/usr/bin/ffprobe", "-i", "/tmp/encoder/job-1-abc/asset-0"], work)).toBe(true);
    expect(
      isWorkDirTool(["ffmpeg", "-filter_complex", "drawtext=textfile='/tmp/encoder/job-2-x/text-1-0-0.txt'"], work),
    ).toBe(true);
    expect(isWorkDirTool(["ffmpeg", "-i", "/tmp/encoder-other/job-1-abc/source"], work)).toBe(false);
    expect(isWorkDirTool(["ffmpeg", "-i", "/home/me/video.mp4"], work)).toBe(false);
    expect(isWorkDirTool(["vim", "/tmp/encoder/job-1-abc/source"], work)).toBe(false);
    expect(isWorkDirTool([""], work)).toBe(false);
  });
});
