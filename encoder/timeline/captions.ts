import type { CaptionClip, CaptionCue, TextClip } from "../../domain/edl/schema";

/**
 * A caption clip's cues as the text clips they are drawn as: each cue in the clip's style, shown
 * from its start to its end (offset by the clip's startTime), with no fade. drawText then draws
 * one drawtext per line of each, enabled over the cue's interval only.
 */
export function captionTexts(clip: CaptionClip, cues: readonly CaptionCue[]): TextClip[] {
  const { id, startTime, src: _src, cues: _cues, ...style } = clip;
  return cues.map((cue) => ({
    ...style,
    id,
    text: cue.text,
    startTime: startTime + cue.start,
    duration: cue.end - cue.start,
    fadeIn: 0,
    fadeOut: 0,
  }));
}
