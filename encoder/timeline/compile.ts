import {
  type CaptionCue,
  timelineEnd,
  type OverlayClip,
  type Resolution,
  type TextClip,
  textLines,
  type ValidatedEdl,
  type VideoClip,
} from "../../domain/edl/validated-edl";
import { MAX_TEXT_LINES } from "../../domain/edl/limits";
import { JobFailure } from "../failure";
import { head } from "../ffmpeg/args/command";
import { even } from "../ffmpeg/args/sizes";
import { captionTexts } from "./captions";
import { round } from "./colour";
import { GraphBuilder } from "./graph";
import { encodeArgs } from "./output-args";
import { drawOverlay, type ImageInfo } from "./overlays";
import { drawText } from "./text";
import { buildVideoTrack, type MediaInfo } from "./video-track";

export interface TimelineAssets {
  /** Downloaded media by URL (clip sources and replaceAudio files). */
  media: Map<string, MediaInfo & { width?: number; height?: number; fps?: number | null }>;
  /** Downloaded overlay images by URL. */
  images: Map<string, ImageInfo>;
  /** Font files by `family|weight`, resolved through fontconfig beforehand. */
  fonts: Map<string, string>;
  /** Caption files' cues by URL, downloaded and parsed beforehand; absent when the timeline has none. */
  captions?: ReadonlyMap<string, readonly CaptionCue[]>;
}

export interface CompiledTimeline {
  args: string[];
  /** The filter graph, which `args` read from a file in `files`. */
  graph: string;
  /**
   * To write before running: the graph, and the texts drawtext reads (textfile=). As arguments,
   * a timeline of many clips or lines would pass Linux's limit of 128 KiB on one argument (E2BIG).
   */
  files: { path: string; content: string }[];
  duration: number;
  frame: Resolution;
  fps: number;
}

export const fontKey = (clip: Pick<TextClip, "fontFamily" | "fontWeight">) => `${clip.fontFamily}|${clip.fontWeight}`;

/**
 * A validated timeline as ONE FFmpeg invocation with ONE filter graph: the video track
 * (clips, speed, gaps, audio) concatenated, then overlay and text tracks drawn on top in
 * document order. Pure: every file it names is passed in or returned in `files`.
 */
export function compileTimeline(
  edl: ValidatedEdl,
  assets: TimelineAssets,
  paths: { workDir: string; output: string },
): CompiledTimeline {
  const tracks = edl.timeline.tracks;
  const videoClips = tracks.flatMap((t) => (t.type === "video" ? t.clips : [])) as VideoClip[];
  const first = [...videoClips].sort((a, b) => a.startTime - b.startTime)[0];
  const media = (url: string, clipId: string) => {
    const info = assets.media.get(url);
    if (!info) throw JobFailure.invalidTimeline(`Asset for clip "${clipId}" was not downloaded`);
    return info;
  };
  const firstInfo = media(first.src, first.id);
  const frame = edl.output.resolution ?? {
    width: even(firstInfo.width ?? 1280),
    height: even(firstInfo.height ?? 720),
  };
  const fps = edl.output.fps ?? round(firstInfo.fps ?? 30, 3);
  const duration = round(timelineEnd(tracks), 3);

  const g = new GraphBuilder();
  const base = buildVideoTrack(g, videoClips, media, frame, fps, duration);
  let picture = base.video;
  const files: CompiledTimeline["files"] = [];
  tracks.forEach((track, t) => {
    if (track.type === "overlay") {
      for (const clip of track.clips as OverlayClip[]) {
        const image = assets.images.get(clip.src);
        if (!image) throw JobFailure.invalidTimeline(`Image for overlay "${clip.id}" was not downloaded`);
        picture = drawOverlay(g, picture, clip, image, frame, fps, duration);
      }
    }
    /** Draws a text clip, its lines written to files named after `name`. */
    const text = (clip: TextClip, name: string) => {
      const font = assets.fonts.get(fontKey(clip));
      if (!font) throw JobFailure.invalidTimeline(`No font resolved for text "${clip.id}"`);
      const fileOf = (line: number) => `${paths.workDir}/${name}-${line}.txt`;
      textLines(clip).forEach((content, line) => {
        files.push({ path: fileOf(line), content });
      });
      picture = drawText(g, picture, clip, font, fileOf);
    };
    if (track.type === "text") {
      (track.clips as TextClip[]).forEach((clip, c) => {
        text(clip, `text-${t}-${c}`);
      });
    }
    if (track.type === "caption") {
      track.clips.forEach((clip, c) => {
        const cues = clip.cues ?? (clip.src !== undefined ? assets.captions?.get(clip.src) : undefined);
        if (!cues) throw JobFailure.invalidTimeline(`Captions for clip "${clip.id}" were not downloaded`);
        captionTexts(clip, cues, duration).forEach((cue, k) => {
          text(cue, `caption-${t}-${c}-${k}`);
        });
      });
    }
  });
  // The validator held text clips and inline cues to the limit; a caption file's cues are known
  // only now. Each line is a drawtext of its own (its memory: docs/timelines.md#validation-decisions).
  const lines = files.length; // every file so far holds one line of text
  if (lines > MAX_TEXT_LINES)
    throw JobFailure.invalidTimeline(
      `Too many lines of text: ${lines} across the text clips and captions, caption files included (maximum ${MAX_TEXT_LINES})`,
    );

  const graph = g.filterGraph();
  const graphFile = `${paths.workDir}/graph.txt`;
  files.push({ path: graphFile, content: graph });
  const args = [
    ...head(g.inputs()),
    // The graph in one thread: its slice threads only compete with x264's frame threads
    // (docs/benchmarks.md#benchedl).
    "-filter_complex_threads",
    "1",
    "-filter_complex_script",
    graphFile,
    "-map",
    picture,
    "-map",
    base.audio,
    ...encodeArgs(edl.output),
    paths.output,
  ];
  return { args, graph, files, duration, frame, fps };
}
