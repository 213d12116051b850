import type { CaptionClip, CaptionCue, TextClip } from "../../domain/edl/validated-edl";

/**
 * A caption clip's cues as the text clips they are drawn as: each cue in the clip's style, shown
 * from its start to its end (offset by the clip's startTime), with no fade. drawText then draws
 * one drawtext per line of each, enabled over the cue's interval only. Cues that start at or
 * after the timeline's `end` are left out: a file's cues never lengthen the timeline, and each
 * line drawn costs a filter (a film's subtitles on a short excerpt keep only the excerpt's).
 */
export function captionTexts(clip: CaptionClip, cues: readonly CaptionCue[], end: number): TextClip[] {
  const { id, startTime, src: _src, cues: _cues, ...style } = clip;
  return cues
    .filter((cue) => startTime + cue.start < end)
    .map((cue) => ({
      ...style,
      id,
      text: cue.text,
      startTime: startTime + cue.start,
      duration: cue.end - cue.start,
      fadeIn: 0,
      fadeOut: 0,
    }));
}
