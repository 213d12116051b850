import type { VideoEncoder } from "../../../domain/presets/recipes";

/**
 * Encoder selection and speed. `gopFrames` is for ladders: a fixed keyframe interval with no
 * extra keyframes at scene cuts, so every rung's segments start at the same instants.
 */
export function videoEncoderArgs(video: VideoEncoder, gopFrames?: number): string[] {
  const gop = gopFrames === undefined ? [] : ["-g", String(gopFrames)];
  switch (video.codec) {
    case "libx264":
      return [
        "-c:v",
        "libx264",
        "-preset",
        video.preset,
        ...(gopFrames === undefined ? [] : [...gop, "-keyint_min", String(gopFrames), "-sc_threshold", "0"]),
      ];
    case "libx265": {
      // x265 logs its whole configuration at info level; it also defaults to open GOPs, whose
      // leading frames reference the previous segment, and ignores -sc_threshold.
      const params = gopFrames === undefined ? "log-level=error" : "log-level=error:scenecut=0:open-gop=0";
      return [
        "-c:v",
        "libx265",
        "-preset",
        video.preset,
        ...(gopFrames === undefined ? [] : [...gop, "-keyint_min", String(gopFrames)]),
        "-x265-params",
        params,
        // Apple players only accept HEVC tagged hvc1 (parameter sets in the sample entry).
        "-tag:v",
        "hvc1",
      ];
    }
    case "libsvtav1":
      // SVT-AV1's scene-change keyframes are off by default, so -g alone aligns the rungs.
      return ["-c:v", "libsvtav1", "-preset", String(video.preset), ...gop];
    case "libvpx-vp9":
      // row-mt: VP9 uses both cores within each tile row instead of one thread per tile.
      return ["-c:v", "libvpx-vp9", "-deadline", video.deadline, "-cpu-used", String(video.cpuUsed), "-row-mt", "1", ...gop];
  }
}
