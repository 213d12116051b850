import type { EncoderPreset, OutputSettings } from "../../domain/edl/schema";

const MUXERS = { mp4: "mp4", webm: "webm", mov: "mov", mkv: "matroska" } as const;
const AUDIO_ENCODERS = { aac: "aac", mp3: "libmp3lame", opus: "libopus" } as const;

export const CONTENT_TYPES = { mp4: "video/mp4", webm: "video/webm", mov: "video/quicktime", mkv: "video/x-matroska" } as const;

/** VP9 has no x264-style presets: the nearest deadline/cpu-used pair for each speed. */
function vp9Speed(preset: EncoderPreset): string[] {
  if (preset === "ultrafast" || preset === "superfast") return ["-deadline", "realtime", "-cpu-used", "8"];
  if (preset === "veryfast" || preset === "faster") return ["-deadline", "good", "-cpu-used", "5"];
  if (preset === "fast" || preset === "medium") return ["-deadline", "good", "-cpu-used", "3"];
  return ["-deadline", "good", "-cpu-used", "1"];
}

/** Rate control: CRF alone, a bitrate alone, or CRF capped by the bitrate when both are sent. */
function videoRate(output: OutputSettings): string[] {
  const { crf, videoBitrate } = output;
  if (output.videoCodec === "libvpx-vp9") {
    // VP9: -b:v 0 with a CRF is constant quality; a bitrate with a CRF is constrained quality.
    return [...(crf !== undefined ? ["-crf", String(crf)] : []), "-b:v", videoBitrate ?? "0"];
  }
  if (crf !== undefined && videoBitrate) return ["-crf", String(crf), "-maxrate", videoBitrate, "-bufsize", videoBitrate];
  if (crf !== undefined) return ["-crf", String(crf)];
  return ["-b:v", videoBitrate!];
}

export function encodeArgs(output: OutputSettings): string[] {
  const codec = output.videoCodec;
  const video =
    codec === "libvpx-vp9"
      ? ["-c:v", "libvpx-vp9", ...vp9Speed(output.preset), "-row-mt", "1"]
      : codec === "libx265"
        ? ["-c:v", "libx265", "-preset", output.preset, "-x265-params", "log-level=error", ...(output.container === "mp4" || output.container === "mov" ? ["-tag:v", "hvc1"] : [])]
        : ["-c:v", "libx264", "-preset", output.preset];
  return [
    ...video,
    ...videoRate(output),
    "-pix_fmt",
    "yuv420p",
    "-c:a",
    AUDIO_ENCODERS[output.audioCodec],
    "-b:a",
    output.audioBitrate,
    "-ar",
    "48000",
    "-ac",
    "2",
    ...(output.container === "mp4" || output.container === "mov" ? ["-movflags", "+faststart"] : []),
    "-f",
    MUXERS[output.container],
  ];
}
