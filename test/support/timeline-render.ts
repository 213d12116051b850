/**
 * Timelines built as the validator hands them over (ValidatedEdl, defaults filled), compiled and
 * rendered by FFmpeg, for the render tests of 1.1's properties; and the lavfi fixtures they use.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  DEFAULT_CODECS,
  type OverlayClip,
  type TextClip,
  type Track,
  type ValidatedEdl,
  type VideoClip,
} from "../../domain/edl/validated-edl";
import { runFfmpeg } from "../../encoder/ffmpeg/run";
import { compileTimeline, type TimelineAssets } from "../../encoder/timeline/compile";
import { ffmpeg } from "./media";

export const FRAME = { width: 160, height: 120 };
export const FPS = 25;

export function videoClip(fields: Partial<VideoClip> & Pick<VideoClip, "id" | "src" | "out">): VideoClip {
  return { in: 0, startTime: 0, speed: 1, mute: false, volume: 0, ...fields };
}

export function overlayClip(fields: Partial<OverlayClip> & Pick<OverlayClip, "id" | "src" | "duration">): OverlayClip {
  return {
    startTime: 0,
    position: { x: 0, y: 0 },
    opacity: 1,
    fadeIn: 0,
    fadeOut: 0,
    blendMode: "normal",
    ...fields,
  };
}

export function textClip(fields: Partial<TextClip> & Pick<TextClip, "id" | "text" | "duration">): TextClip {
  return {
    startTime: 0,
    fontSize: 40,
    fontColor: "#FFFFFF",
    fontFamily: "DejaVu Sans",
    fontWeight: "bold",
    textAlign: "center",
    position: { x: "center", y: "center" },
    fadeIn: 0,
    fadeOut: 0,
    ...fields,
  };
}

/** A 1.1 timeline at 160x120, 25 fps, as validateEdl would return it. */
export function timeline11(tracks: Track[]): ValidatedEdl {
  return {
    version: "1.1",
    output: {
      resolution: FRAME,
      fps: FPS,
      container: "mp4",
      videoCodec: DEFAULT_CODECS.mp4.video,
      audioCodec: DEFAULT_CODECS.mp4.audio,
      audioBitrate: "128k",
      preset: "ultrafast",
      crf: 18,
    },
    timeline: { tracks },
  };
}

/** Compiles and renders `edl` into `dir/name.mp4`; returns the path and the compiled timeline. */
export async function renderTimeline(dir: string, name: string, edl: ValidatedEdl, assets: Partial<TimelineAssets>) {
  const output = join(dir, `${name}.mp4`);
  const workDir = join(dir, `${name}-work`);
  await mkdir(workDir, { recursive: true });
  const compiled = compileTimeline(
    edl,
    { media: new Map(), images: new Map(), fonts: new Map(), ...assets },
    { workDir, output },
  );
  await Promise.all(compiled.files.map((f) => writeFile(f.path, f.content)));
  await runFfmpeg(compiled.args, { workDir });
  return { output, compiled };
}

/** Lossless H.264 (so a fixture's colours are exact) and stereo AAC: every fixture below is written so. */
const LOSSLESS = ["-ac", "2", "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-c:a", "aac"];

/**
 * A picture of four flat quadrants (red top left, lime top right, blue bottom left, yellow bottom
 * right) with a `tone` Hz sine: where each quadrant lands shows what a crop, flip or turn did.
 */
export async function quadrants(path: string, seconds: number, tone = 440) {
  const q = (c: string) => `color=c=${c}:s=80x60:r=${FPS}:d=${seconds}`;
  await ffmpeg([
    "-filter_complex",
    `${q("red")}[a];${q("lime")}[b];${q("blue")}[c];${q("yellow")}[d];[a][b]hstack[top];[c][d]hstack[bottom];[top][bottom]vstack,format=yuv420p[v];sine=frequency=${tone}:sample_rate=48000:duration=${seconds}[s]`,
    "-map",
    "[v]",
    "-map",
    "[s]",
    ...LOSSLESS,
    path,
  ]);
}

/** A flat `colour` picture with a `tone` Hz sine, `seconds` long at 160x120. */
export async function flat(path: string, colour: string, seconds: number, tone: number) {
  await ffmpeg([
    "-f",
    "lavfi",
    "-i",
    `color=c=${colour}:s=160x120:r=${FPS}:d=${seconds}`,
    "-f",
    "lavfi",
    "-i",
    `sine=frequency=${tone}:sample_rate=48000:duration=${seconds}`,
    "-pix_fmt",
    "yuv420p",
    ...LOSSLESS,
    path,
  ]);
}

/** The assets entry for a fixture made above. */
export const mediaOf = (path: string, audio = true) => ({
  path,
  hasVideo: true,
  hasAudio: audio,
  width: FRAME.width,
  height: FRAME.height,
  fps: FPS,
});
