import { describe, expect, it } from "vitest";
import { assertOutName, linkedOutput, presetOutput, timelineOutput } from "../../../cli/out-name";

describe("--out and what will be written", () => {
  it("a preset writes its one file's extension, or a ZIP archive for many files; a preset the CLI does not know, nothing it can say", () => {
    expect(
      [
        "mp4_264_720p",
        "audio_aac_podcast",
        "hls_abr_264_basic",
        "util_thumbnails",
        "util_subs_sidecar_basic",
        "mp4_999p",
      ].map(presetOutput),
    ).toEqual(["mp4", "m4a", "zip", "zip", "zip", undefined]);
  });

  it("a timeline writes its container, mp4 unless it names another", () => {
    expect(timelineOutput({ version: "1.0", timeline: { tracks: [] } })).toBe("mp4");
    expect(timelineOutput({ output: null })).toBe("mp4");
    expect(timelineOutput({ output: { container: "webm" } })).toBe("webm");
    expect(timelineOutput({ output: { container: "avi" } })).toBeUndefined();
    expect(timelineOutput(null)).toBe("mp4");
  });

  it("a signed link names its file", () => {
    expect(linkedOutput("http://127.0.0.1:9000/bucket/outputs/a/b/hls_abr_264_basic.zip?X-Amz-Signature=abc")).toBe(
      "zip",
    );
    expect(linkedOutput("https://storage.example.com/outputs/a/b/output.WEBM")).toBe("webm");
    expect(linkedOutput("https://storage.example.com/storage/404?X-Amz-Signature=abc")).toBeUndefined();
    expect(linkedOutput("")).toBeUndefined();
  });

  it("an extension that is not the output's is refused, naming the right one; no extension, or an unknown output, passes", () => {
    expect(() => assertOutName("dir/x.mp4", "zip", "preset hls_abr_264_basic")).toThrow(
      "--out dir/x.mp4: preset hls_abr_264_basic writes a ZIP archive (.zip), not .mp4; name it dir/x.zip",
    );
    expect(() => assertOutName("x.MP4", "webm", "the timeline")).toThrow(
      "--out x.MP4: the timeline writes a .webm file, not .mp4; name it x.webm",
    );
    for (const [out, written] of [
      ["x.MP4", "mp4"],
      ["x", "zip"],
      ["x.mp4", undefined],
      [undefined, "zip"],
    ] as const) {
      expect(() => assertOutName(out, written, "preset p"), `${out} for ${written}`).not.toThrow();
    }
  });
});
