import { CRF_RANGE, type EncoderPreset, type OutputSettings } from "../../domain/edl/validated-edl";
import type { VideoEncoder } from "../../domain/presets/recipes";
import { videoAudioArgs } from "../ffmpeg/args/command";
import { MUXERS, faststart, isIsoBmff } from "../ffmpeg/args/containers";
import { videoEncoderArgs, type RateControl } from "../ffmpeg/args/video-encoder";

/** The EDL names audio codecs by format; FFmpeg by encoder. */
const AUDIO_ENCODERS = { aac: "aac", mp3: "libmp3lame", opus: "libopus" } as const;

/** VP9 has no x264-style presets: the nearest deadline/cpu-used pair for each speed. */
function vp9Speed(preset: EncoderPreset): { deadline: "good" | "realtime"; cpuUsed: number } {
  if (preset === "ultrafast" || preset === "superfast") return { deadline: "realtime", cpuUsed: 8 };
  if (preset === "veryfast" || preset === "faster") return { deadline: "good", cpuUsed: 5 };
  if (preset === "fast" || preset === "medium") return { deadline: "good", cpuUsed: 3 };
  return { deadline: "good", cpuUsed: 1 };
}

function videoEncoderOf({ videoCodec, preset }: OutputSettings): VideoEncoder {
  return videoCodec === "libvpx-vp9" ? { codec: videoCodec, ...vp9Speed(preset) } : { codec: videoCodec, preset };
}

/** CRF alone, a bitrate alone, or CRF capped by the bitrate when both are sent. */
function rateOf({ crf, videoBitrate, videoCodec }: OutputSettings): RateControl {
  if (videoBitrate === undefined) return { crf: crf ?? CRF_RANGE[videoCodec].default };
  return crf === undefined ? { bitrate: videoBitrate } : { crf, cap: { maxrate: videoBitrate, bufsize: videoBitrate } };
}

/** The output half of a timeline's command: the EDL's output settings in the encoder's terms. */
export function encodeArgs(output: OutputSettings): string[] {
  const { container } = output;
  return [
    ...videoEncoderArgs({ encoder: videoEncoderOf(output), rate: rateOf(output), isoBmff: isIsoBmff(container) }),
    "-pix_fmt",
    "yuv420p",
    ...videoAudioArgs(AUDIO_ENCODERS[output.audioCodec], output.audioBitrate),
    ...faststart(container),
    "-f",
    MUXERS[container],
  ];
}
