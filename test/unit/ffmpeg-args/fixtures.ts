import { MAX_PICTURE_PIXELS } from "../../../encoder/ffmpeg/picture-limits";
import type { ProbeSummary } from "../../../encoder/ffmpeg/probe";

export const IN = "/work/job-1/source.mp4";
export const OUT = "/work/job-1/out";

/** A 10 s 1080p30 H.264 source with stereo AAC and two text subtitle tracks and one bitmap track. */
export const PROBE_1080: ProbeSummary = {
  duration: 10,
  video: { index: 0, codec: "h264", width: 1920, height: 1080, sampleAspect: 1, fps: 30, frameCount: 300 },
  audio: [{ index: 1, codec: "aac", channels: 2, sampleRate: 48000, language: "eng" }],
  subtitles: [
    { index: 2, codec: "subrip", language: "eng", textBased: true },
    { index: 3, codec: "hdmv_pgs_subtitle", language: "deu", textBased: false },
    { index: 4, codec: "ass", language: "fra", textBased: true },
  ],
};

export const PROBE_480: ProbeSummary = {
  ...PROBE_1080,
  video: { index: 0, codec: "h264", width: 854, height: 480, sampleAspect: 1, fps: 25, frameCount: 250 },
};

export const PROBE_NO_AUDIO: ProbeSummary = { ...PROBE_1080, audio: [] };

/** The input option every command gives each input: decoders refuse larger pictures. */
export const MAX_PICTURE = String(MAX_PICTURE_PIXELS);

/** The head every command shares. */
export const HEAD = [
  "-hide_banner",
  "-nostdin",
  "-y",
  "-protocol_whitelist",
  "file",
  "-max_pixels",
  MAX_PICTURE,
  "-i",
  IN,
  "-loglevel",
  "warning",
  "-progress",
  "pipe:1",
  "-nostats",
];

/** The value following `flag` in `args`. */
export function flagValue(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}
