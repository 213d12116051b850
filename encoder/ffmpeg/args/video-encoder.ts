import type { VideoEncoder } from "../../../domain/presets/recipes";
import { HVC1_TAG } from "./containers";

/**
 * How the encoder spends bits: constant quality (`crf`), optionally capped, or a target bitrate
 * alone. Rates as FFmpeg takes them ("3000k").
 */
export type RateControl = { crf: number; cap?: { maxrate: string; bufsize: string } } | { bitrate: string };

/** Everything about the video encoder of one output: presets and timelines alike. */
export interface VideoEncoding {
  encoder: VideoEncoder;
  /**
   * For ladders: a fixed keyframe interval with no extra keyframes at scene cuts, so every
   * rung's segments start at the same instants.
   */
  gopFrames?: number;
  /** Absent where the caller sets rates per output stream (a ladder's rungs). */
  rate?: RateControl;
  /** The output is ISO BMFF (MP4, MOV, fMP4 segments), where HEVC has to be tagged hvc1. */
  isoBmff: boolean;
  /**
   * Every GOP closed even without a fixed interval: a part of a split encode is joined to the
   * next one, whose first frame no frame of this part may reference (docs/scaling.md).
   */
  closedGop?: boolean;
}

function rateArgs(codec: VideoEncoder["codec"], rate: RateControl | undefined): string[] {
  if (!rate) return [];
  if ("bitrate" in rate) return ["-b:v", rate.bitrate];
  const crf = ["-crf", String(rate.crf)];
  // libvpx: a CRF with -b:v 0 is constant quality; with a bitrate it is constrained quality,
  // where the bitrate is the ceiling.
  if (codec === "libvpx-vp9") return [...crf, "-b:v", rate.cap?.maxrate ?? "0"];
  return rate.cap ? [...crf, "-maxrate", rate.cap.maxrate, "-bufsize", rate.cap.bufsize] : crf;
}

function codecArgs({ encoder: video, gopFrames, isoBmff, closedGop }: VideoEncoding): string[] {
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
      const params =
        gopFrames !== undefined
          ? "log-level=error:scenecut=0:open-gop=0"
          : closedGop
            ? "log-level=error:open-gop=0"
            : "log-level=error";
      return [
        "-c:v",
        "libx265",
        "-preset",
        video.preset,
        ...(gopFrames === undefined ? [] : [...gop, "-keyint_min", String(gopFrames)]),
        "-x265-params",
        params,
        ...(isoBmff ? HVC1_TAG : []),
      ];
    }
    case "libsvtav1":
      // SVT-AV1's scene-change keyframes are off by default, so -g alone aligns the rungs.
      return ["-c:v", "libsvtav1", "-preset", String(video.preset), ...gop];
    case "libvpx-vp9":
      // row-mt: VP9 uses both cores within each tile row instead of one thread per tile.
      return [
        "-c:v",
        "libvpx-vp9",
        "-deadline",
        video.deadline,
        "-cpu-used",
        String(video.cpuUsed),
        "-row-mt",
        "1",
        ...gop,
      ];
  }
}

/** The video encoder's arguments: codec, speed, keyframes, rate control, tag. */
export function videoEncoderArgs(encoding: VideoEncoding): string[] {
  return [...codecArgs(encoding), ...rateArgs(encoding.encoder.codec, encoding.rate)];
}
