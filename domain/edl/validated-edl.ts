/**
 * The EDL (timeline) document after validation, as types, with the versions and names its fields
 * accept and their defaults: every field of the contract's tables (docs/contract.md §3.10–§3.14),
 * with defaults applied and strings parsed where the encoder
 * needs numbers. `validateEdl` is the only producer of these values; the timeline compiler
 * consumes them without re-checking.
 *
 * Times are seconds. Colours are normalised to upper-case `#RRGGBB` or `#RRGGBBAA`.
 */

export const EDL_VERSIONS = ["1.0", "1.1"] as const;
export type EdlVersion = (typeof EDL_VERSIONS)[number];

/**
 * Transition names, Shotstack's spelling where it has one. `fade` goes through black (no
 * neighbour needed); every other name is an FFmpeg `xfade` transition with the neighbouring clip
 * on the same track (or with black when there is none).
 */
export const TRANSITION_TYPES = [
  "fade",
  "crossfade",
  "wipeLeft",
  "wipeRight",
  "wipeUp",
  "wipeDown",
  "slideLeft",
  "slideRight",
  "slideUp",
  "slideDown",
  "zoom",
  "circleCrop",
  "rectCrop",
  "distance",
  "fadeBlack",
  "fadeWhite",
  "radial",
  "smoothLeft",
  "smoothRight",
  "smoothUp",
  "smoothDown",
  "circleOpen",
  "circleClose",
  "vertOpen",
  "vertClose",
  "horzOpen",
  "horzClose",
  "dissolve",
  "pixelize",
  "diagTl",
  "diagTr",
  "diagBl",
  "diagBr",
  "hlSlice",
  "hrSlice",
  "vuSlice",
  "vdSlice",
  "hBlur",
  "fadeGrays",
  "wipeTl",
  "wipeTr",
  "wipeBl",
  "wipeBr",
  "squeezeH",
  "squeezeV",
] as const;
export type TransitionType = (typeof TRANSITION_TYPES)[number];
/** What overlay and text clips can do: fade (alpha) or slide in from / out to the frame's edge. */
export const LAYER_TRANSITION_TYPES = ["fade", "slideLeft", "slideRight", "slideUp", "slideDown"] as const;

export interface TransitionEdge<T extends string = TransitionType> {
  type: T;
  duration: number;
}
export interface Transition<T extends string = TransitionType> {
  in?: TransitionEdge<T>;
  out?: TransitionEdge<T>;
}

/** Fractions of the source frame cut from each side, before anything else. */
export interface Crop {
  top: number;
  bottom: number;
  left: number;
  right: number;
}

export const FLIPS = ["horizontal", "vertical", "both"] as const;
/** Applied after crop, before placement: flip, then rotate (degrees clockwise), then scale. */
export interface Transform {
  rotate: number;
  flip?: (typeof FLIPS)[number];
  scale: number;
}

export const FILTER_TYPES = [
  "greyscale",
  "sepia",
  "blur",
  "sharpen",
  "lighten",
  "darken",
  "contrast",
  "saturate",
  "negative",
  "boost",
  "muted",
] as const;
export type FilterType = (typeof FILTER_TYPES)[number];
/** `strength` 0..1; a bare name in the document means its default strength (1). */
export interface Filter {
  type: FilterType;
  strength: number;
}

/** Holds the frame at source time `at` (in..out) for `duration` s; the clip grows by `duration`, silent meanwhile. */
export interface Freeze {
  at: number;
  duration: number;
}

export interface CaptionCue {
  start: number;
  end: number;
  text: string;
}

export const CONTAINERS = ["mp4", "webm", "mov", "mkv"] as const;
export type Container = (typeof CONTAINERS)[number];

export const VIDEO_CODECS = ["libx264", "libx265", "libvpx-vp9"] as const;
export type VideoCodec = (typeof VIDEO_CODECS)[number];

export const AUDIO_CODECS = ["aac", "mp3", "opus"] as const;
export type AudioCodec = (typeof AUDIO_CODECS)[number];

/** Encoder speed settings, fastest first. */
export const ENCODER_PRESETS = [
  "ultrafast",
  "superfast",
  "veryfast",
  "faster",
  "fast",
  "medium",
  "slow",
  "slower",
  "veryslow",
] as const;
export type EncoderPreset = (typeof ENCODER_PRESETS)[number];

export const TRACK_TYPES = ["video", "overlay", "text"] as const;
/** Version 1.1 adds the caption track. */
export const TRACK_TYPES_1_1 = [...TRACK_TYPES, "caption"] as const;

export const BLEND_MODES = ["normal", "multiply", "screen", "overlay", "darken", "lighten"] as const;
export type BlendMode = (typeof BLEND_MODES)[number];

export const FONT_WEIGHTS = ["normal", "bold"] as const;
type FontWeight = (typeof FONT_WEIGHTS)[number];

export const TEXT_ALIGNS = ["left", "center", "right"] as const;
type TextAlign = (typeof TEXT_ALIGNS)[number];

/**
 * The contract lists five position keywords for both axes (docs/contract.md §3.13); each axis
 * only takes the three that mean something on it (`x: "top"` has no sensible reading).
 */
/** The contract lets either axis take any of these; a keyword of the other axis means centre. */
export const POSITION_KEYWORDS = ["center", "left", "right", "top", "bottom"] as const;
export const X_KEYWORDS = ["left", "center", "right"] as const;
export const Y_KEYWORDS = ["top", "center", "bottom"] as const;
export type XPosition = number | (typeof X_KEYWORDS)[number];
export type YPosition = number | (typeof Y_KEYWORDS)[number];

/** Clip properties version 1.0 accepts without applying (docs/contract.md §3.12). Order is the report order. */
export const UNAPPLIED_FEATURES = ["transform", "crop", "filters", "transition", "freeze"] as const;
/** What a 1.1 timeline applies, in `stats.features` order (docs/timelines.md, version 1.1). */
export const APPLIED_FEATURES = ["transition", "crop", "transform", "filters", "freeze", "captions"] as const;
/** Every name `stats.features` may hold, in either version. */
export const EDL_FEATURES = [...UNAPPLIED_FEATURES, "captions"] as const;
export type EdlFeature = (typeof EDL_FEATURES)[number];

export interface Resolution {
  width: number;
  height: number;
}

export interface OutputSettings {
  /** Absent when not sent: the renderer uses the first clip's size. */
  resolution?: Resolution;
  /** Absent when not sent: the renderer uses the first clip's frame rate. */
  fps?: number;
  container: Container;
  videoCodec: VideoCodec;
  audioCodec: AudioCodec;
  /** As sent, e.g. "2500k" (FFmpeg takes it verbatim). Absent: quality is set by `crf` alone. */
  videoBitrate?: string;
  audioBitrate: string;
  preset: EncoderPreset;
  /** Absent only when the caller set `videoBitrate` without `crf`. */
  crf?: number;
}

/** Pixel position; numbers are the top-left corner in output pixels and may be negative (partly off-frame). */
export interface Position {
  x: XPosition;
  y: YPosition;
}

export type Length = { unit: "px"; value: number } | { unit: "percent"; value: number };

/** A missing side keeps the image's aspect ratio; both missing means natural size (then `size` is absent). */
export interface Size {
  width?: Length;
  height?: Length;
}

export interface VideoClip {
  id: string;
  src: string;
  in: number;
  out: number;
  startTime: number;
  speed: number;
  mute: boolean;
  /** Gain in dB. */
  volume: number;
  /** Replaces the clip's own audio; a muted clip stays silent either way. */
  replaceAudio?: string;
  /** Version 1.1 only, each present when sent. */
  transition?: Transition;
  crop?: Crop;
  transform?: Transform;
  filters?: Filter[];
  freeze?: Freeze;
}

/** Overlay and text clips slide or fade in and out, over what is beneath them. */
export type LayerTransition = Transition<(typeof LAYER_TRANSITION_TYPES)[number]>;

export interface OverlayClip {
  id: string;
  src: string;
  startTime: number;
  duration: number;
  position: Position;
  size?: Size;
  opacity: number;
  fadeIn: number;
  fadeOut: number;
  blendMode: BlendMode;
  /** Version 1.1 only, each present when sent. */
  transition?: LayerTransition;
  crop?: Crop;
  transform?: Transform;
  filters?: Filter[];
}

export interface TextBackground {
  color: string;
  opacity: number;
  padding: number;
}

export interface TextOutline {
  color: string;
  width: number;
}

export interface TextShadow {
  color: string;
  offsetX: number;
  offsetY: number;
  blur: number;
}

export interface TextClip {
  id: string;
  text: string;
  startTime: number;
  duration: number;
  fontSize: number;
  fontColor: string;
  fontFamily: string;
  fontWeight: FontWeight;
  textAlign: TextAlign;
  position: Position;
  background?: TextBackground;
  outline?: TextOutline;
  shadow?: TextShadow;
  fadeIn: number;
  fadeOut: number;
  /** Version 1.1 only, present when sent. */
  transition?: LayerTransition;
}

/**
 * Version 1.1: subtitles drawn in the text clip's style. Exactly one of `src` (an SRT or WebVTT
 * file, told apart by its content, parsed by domain/captions.ts when the encoder has it) and
 * `cues`. Every cue's times are relative to `startTime`.
 */
export interface CaptionClip {
  id: string;
  startTime: number;
  src?: string;
  /** Sorted by start; each ends after it starts; text may hold line breaks. */
  cues?: CaptionCue[];
  fontSize: number;
  fontColor: string;
  fontFamily: string;
  fontWeight: FontWeight;
  textAlign: TextAlign;
  position: Position;
  /** Always present: captions read on any picture unless the caller sets it otherwise. */
  background: TextBackground;
  outline?: TextOutline;
  shadow?: TextShadow;
}

/** The lines a text clip draws, each one drawtext of its own: what MAX_TEXT_LINES counts. */
export function textLines(clip: Pick<TextClip, "text">): string[] {
  return clip.text.split(/\r?\n/);
}

export type Clip = VideoClip | OverlayClip | TextClip | CaptionClip;

interface VideoTrack {
  type: "video";
  clips: VideoClip[];
}

interface OverlayTrack {
  type: "overlay";
  clips: OverlayClip[];
}

interface TextTrack {
  type: "text";
  clips: TextClip[];
}

interface CaptionTrack {
  type: "caption";
  clips: CaptionClip[];
}

/** Tracks keep the document's order; overlay, text and caption tracks later in the array draw on top. */
export type Track = VideoTrack | OverlayTrack | TextTrack | CaptionTrack;

export interface ValidatedEdl {
  version: EdlVersion;
  output: OutputSettings;
  /** Exactly one video track, with at least one clip. */
  timeline: { tracks: Track[] };
}

/** What the estimate assumes when the output size and rate will come from the first clip. */
export const DEFAULT_RESOLUTION: Resolution = { width: 1920, height: 1080 };
export const DEFAULT_FPS = 30;
export const DEFAULT_CONTAINER: Container = "mp4";
/** The encoder speed the processing-time factors were measured with. */
export const DEFAULT_ENCODER_PRESET: EncoderPreset = "veryfast";
export const DEFAULT_AUDIO_BITRATE = "128k";
export const DEFAULT_POSITION: Position = { x: "center", y: "center" };

/** WebM only carries VP9 and Opus, so its defaults differ from the other containers'. */
export const DEFAULT_CODECS: Record<Container, { video: VideoCodec; audio: AudioCodec }> = {
  mp4: { video: "libx264", audio: "aac" },
  webm: { video: "libvpx-vp9", audio: "opus" },
  mov: { video: "libx264", audio: "aac" },
  mkv: { video: "libx264", audio: "aac" },
};

/** Each encoder's own default CRF, and its highest value. */
export const CRF_RANGE: Record<VideoCodec, { default: number; max: number }> = {
  libx264: { default: 23, max: 51 },
  libx265: { default: 28, max: 51 },
  "libvpx-vp9": { default: 31, max: 63 },
};

/**
 * What each container's FFmpeg muxer accepts (checked against FFmpeg 5.1: webm takes only
 * VP9/Opus here; mov refuses VP9 and Opus, "only supported in MP4").
 */
export const CONTAINER_CODECS: Record<Container, { video: readonly VideoCodec[]; audio: readonly AudioCodec[] }> = {
  mp4: { video: VIDEO_CODECS, audio: AUDIO_CODECS },
  webm: { video: ["libvpx-vp9"], audio: ["opus"] },
  mov: { video: ["libx264", "libx265"], audio: ["aac", "mp3"] },
  mkv: { video: VIDEO_CODECS, audio: AUDIO_CODECS },
};

export const VIDEO_DEFAULTS = { speed: 1, mute: false, volume: 0 } as const;
export const OVERLAY_DEFAULTS = { opacity: 1, fadeIn: 0, fadeOut: 0, blendMode: "normal" } as const;
export const TEXT_DEFAULTS = {
  fontSize: 48,
  fontColor: "#FFFFFF",
  fontFamily: "Arial",
  fontWeight: "normal",
  textAlign: "center",
  fadeIn: 0,
  fadeOut: 0,
} as const;
/** A caption clip's defaults where they differ from a text clip's: at the bottom, on a box. */
export const CAPTION_DEFAULTS = { startTime: 0, position: { x: "center", y: "bottom" } as Position } as const;
/** Defaults for the parts of a text decoration object the caller left out. */
export const BACKGROUND_DEFAULTS: TextBackground = { color: "#000000", opacity: 0.5, padding: 10 };
export const OUTLINE_DEFAULTS: TextOutline = { color: "#000000", width: 2 };
export const SHADOW_DEFAULTS: TextShadow = { color: "#000000", offsetX: 2, offsetY: 2, blur: 0 };

/** Where a video clip ends on the timeline: its source span played at its speed, then its freeze. */
export function videoClipEnd(clip: Pick<VideoClip, "startTime" | "in" | "out" | "speed" | "freeze">): number {
  return clip.startTime + (clip.out - clip.in) / clip.speed + (clip.freeze?.duration ?? 0);
}

/**
 * Where a caption clip ends as far as the timeline knows: its last inline cue's end. A caption
 * file is read by the encoder, so it lengthens nothing: its cues past the timeline's end are not
 * drawn (docs/timelines.md, version 1.1).
 */
export function captionClipEnd(clip: Pick<CaptionClip, "startTime" | "cues">): number {
  return clip.startTime + (clip.cues ?? []).reduce((latest, cue) => Math.max(latest, cue.end), 0);
}

/** Where any clip ends on the timeline. */
export function clipEnd(clip: Clip): number {
  if ("duration" in clip) return clip.startTime + clip.duration;
  return "in" in clip ? videoClipEnd(clip) : captionClipEnd(clip);
}

/**
 * Where the timeline ends: the latest clip's end. A caption file's clip never lengthens it,
 * wherever it starts (its cues past the end are not drawn): only inline cues have a known end.
 */
export function timelineEnd(tracks: readonly Track[]): number {
  const ends = tracks.flatMap((t) =>
    t.type === "caption" ? t.clips.filter((c) => c.cues).map(captionClipEnd) : t.clips.map((c: Clip) => clipEnd(c)),
  );
  // reduce, not Math.max(...spread): a huge clip array would overflow the argument stack.
  return ends.reduce((latest, end) => Math.max(latest, end), 0);
}
