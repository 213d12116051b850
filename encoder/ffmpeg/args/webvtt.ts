/** `HH:MM:SS.mmm`, the WebVTT timestamp form. */
export function vttTimestamp(seconds: number): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}.${pad(ms % 1000, 3)}`;
}

export interface SpriteCue {
  start: number;
  end: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A thumbnail track: each cue names its tile of the sheet by a media fragment. */
export function spriteVtt(imageName: string, cues: SpriteCue[]): string {
  const blocks = cues.map(
    (c) =>
      `${vttTimestamp(c.start)} --> ${vttTimestamp(c.end)}\n${imageName}#xywh=${c.x},${c.y},${c.width},${c.height}`,
  );
  return `WEBVTT\n\n${blocks.join("\n\n")}\n`;
}

// Matched where they stand (sticky), never on a copy of the rest of the line. A tag's annotation
// stops at the next "<" as well as at ">": each match then reads no further than the next
// candidate, so a line of a million "<c." costs one pass, not one pass per "<" (minutes).
// A character reference WebVTT (HTML) understands: named or numeric.
const CHARACTER_REFERENCE = /&(?:[a-zA-Z][a-zA-Z0-9]*|#[0-9]+|#[xX][0-9a-fA-F]+);/y;
// Cue text tags: class, italic, bold, underline, ruby, voice, language, and timestamps.
const CUE_TAG = /<\/?(?:c|i|b|u|ruby|rt|v|lang)(?:[.\s][^<>]*)?>|<\d{2}:[\d:.]+>/y;

/** Whether `pattern` (sticky) matches `line` at `index`. */
function startsAt(pattern: RegExp, line: string, index: number): boolean {
  pattern.lastIndex = index;
  return pattern.test(line);
}

/**
 * FFmpeg's WebVTT muxer writes cue text as it is, so a subtitle saying "Tom & Jerry" (or
 * "a < b") makes an invalid file that browsers render wrongly. Escapes `&` and `<` in cue text
 * unless they already start a character reference or a cue tag; headers and timing lines stay.
 */
export function escapeVttCueText(vtt: string): string {
  const lines = vtt.split("\n");
  let inCue = false;
  return lines
    .map((line) => {
      if (line.trim() === "") {
        inCue = false;
        return line;
      }
      if (line.includes("-->")) {
        inCue = true;
        return line;
      }
      if (!inCue) return line;
      return line.replace(/[&<]/g, (char, index: number) => {
        if (char === "&") return startsAt(CHARACTER_REFERENCE, line, index) ? char : "&amp;";
        return startsAt(CUE_TAG, line, index) ? char : "&lt;";
      });
    })
    .join("\n");
}
