/** The files the encoder writes whole: single-file presets' outputs and timeline outputs. */
export type Container = "mp4" | "mov" | "m4a" | "webm" | "mkv" | "mp3";

/** The Content-Type a single output is uploaded with, by its container (its file extension). */
export const CONTENT_TYPES: Readonly<Record<Container, string>> = {
  mp4: "video/mp4",
  mov: "video/quicktime",
  m4a: "audio/mp4",
  webm: "video/webm",
  mkv: "video/x-matroska",
  mp3: "audio/mpeg",
};

/** FFmpeg's muxer (`-f`) for each container a timeline can be written in. */
export const MUXERS = { mp4: "mp4", webm: "webm", mov: "mov", mkv: "matroska" } as const satisfies Partial<
  Record<Container, string>
>;

/** MP4, MOV and M4A are ISO BMFF files: the family faststart and the hvc1 tag belong to. */
export function isIsoBmff(container: Container): boolean {
  return container === "mp4" || container === "mov" || container === "m4a";
}

/** Apple players only accept HEVC in ISO BMFF tagged hvc1 (parameter sets in the sample entry). */
export const HVC1_TAG = ["-tag:v", "hvc1"];

/** Moves the index before the media so playback starts before the download ends (ISO BMFF only). */
export function faststart(container: Container): string[] {
  return isIsoBmff(container) ? ["-movflags", "+faststart"] : [];
}
