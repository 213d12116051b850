import { describe, expect, it } from "vitest";
import { memberContentType, onThisOrigin, playbackOf, streamPlayerOf } from "../../../worker/dashboard/lib/playback";
import { PRESET_IDS } from "../../../domain/presets/catalogue";
import { formatDuration, formatTime } from "../../../worker/dashboard/pages/format";

const done = (preset: string, outputKey: string) => ({
  status: "completed" as const,
  storageLayout: "v2" as const,
  preset,
  outputKey,
});

describe("dashboard playback: what the page can play of an output", () => {
  it("single files by extension, HLS and CMAF ladders through hls.js, everything else download only", () => {
    expect(playbackOf(done("mp4_264_720p", "outputs/a/j/mp4_264_720p.mp4"))).toEqual({ kind: "video" });
    expect(playbackOf(done("webm_vp9_1080p", "outputs/a/j/webm_vp9_1080p.webm"))).toEqual({ kind: "video" });
    expect(playbackOf(done("edl_custom", "outputs/a/j/output.mov"))).toEqual({ kind: "video" });
    expect(playbackOf(done("audio_mp3_hq", "outputs/a/j/audio_mp3_hq.mp3"))).toEqual({ kind: "audio" });
    expect(playbackOf(done("audio_aac_podcast", "outputs/a/j/audio_aac_podcast.m4a"))).toEqual({ kind: "audio" });
    for (const preset of [
      "hls_abr_264_basic",
      "hls_abr_265_efficient_4k",
      "cmaf_abr_265_standard",
      "live_hls_264_lowlatency",
    ]) {
      expect(playbackOf(done(preset, `outputs/a/j/${preset}.zip`)), preset).toEqual({
        kind: "hls",
        master: "master.m3u8",
      });
    }
    for (const preset of ["dash_abr_264_standard", "util_thumbnails", "util_sprite_vtt"]) {
      expect(playbackOf(done(preset, `outputs/a/j/${preset}.zip`)), preset).toEqual({ kind: "none" });
    }
  });

  it("nothing to play before completion, or under the legacy layout", () => {
    expect(playbackOf({ ...done("mp4_264_720p", "k.mp4"), status: "processing" })).toEqual({ kind: "none" });
    expect(playbackOf({ ...done("mp4_264_720p", "k.mp4"), storageLayout: "legacy" })).toEqual({ kind: "none" });
  });

  it("a stream's playback link plays through hls.js for HLS and CMAF, dash.js for DASH; other presets have none", () => {
    expect(streamPlayerOf("hls_abr_264_basic")).toBe("hls");
    expect(streamPlayerOf("cmaf_abr_265_standard")).toBe("hls");
    expect(streamPlayerOf("live_hls_264_lowlatency")).toBe("hls");
    expect(streamPlayerOf("dash_abr_264_standard")).toBe("dash");
    expect(streamPlayerOf("live_dash_264_lowlatency")).toBe("dash");
    for (const id of PRESET_IDS.filter((p) => !/^(hls|dash|cmaf|live)_/.test(p)))
      expect(streamPlayerOf(id), id).toBeNull();
    expect(streamPlayerOf("no_such_preset")).toBeNull();
  });

  it("the page loads a playback link by its path, on its own origin, the signature in it kept", () => {
    expect(onThisOrigin("https://api.example.com/play/0f4e8c2a/1790000000.abc_-/master.m3u8")).toBe(
      "/play/0f4e8c2a/1790000000.abc_-/master.m3u8",
    );
  });

  it("ZIP members get the content types players expect; unknown ones download as bytes", () => {
    expect(memberContentType("master.m3u8")).toBe("application/vnd.apple.mpegurl");
    expect(memberContentType("0/segment_000.ts")).toBe("video/mp2t");
    expect(memberContentType("720/seg_1.m4s")).toBe("video/iso.segment");
    expect(memberContentType("evil.html")).toBe("application/octet-stream");
  });

  it("times in UTC to the minute, durations as m:ss or h:mm:ss", () => {
    expect(formatTime(new Date("2026-03-04T05:06:07.890Z"))).toBe("2026-03-04 05:06 UTC");
    expect(formatTime(null)).toBe("—");
    expect(formatDuration(8.4)).toBe("0:08");
    expect(formatDuration(3725)).toBe("1:02:05");
    expect(formatDuration(null)).toBe("—");
  });
});
