/**
 * Caption files for the 1.1 caption track (docs/timelines.md, version 1.1): SRT and WebVTT read
 * into the cues a caption clip draws. Pure, so the encoder runs it on the file it downloaded and
 * the tests run it on text. A file is WebVTT when its first line is `WEBVTT`, else SRT. What it
 * cannot read is a `CaptionParseError` naming the 1-based line, which the encoder reports as
 * `Caption clip <id>: line N: <what>`.
 *
 * Markup is dropped (`<i>`, `<b>`, `<font …>`, WebVTT's `<v Name>` and `<c.class>`, SSA's
 * `{\an8}`), since drawtext would draw it as text, and WebVTT's character references decoded.
 */
import { MAX_CUES } from "./edl/field-tables-1-1";
import { MAX_TEXT_LINES } from "./edl/limits";
import type { CaptionCue } from "./edl/validated-edl";

/**
 * The largest caption file read: a feature film's subtitles are about 100 KiB. The encoder stops
 * the download here, before the file is read into memory as text.
 */
export const MAX_CAPTION_BYTES = 4 * 1024 * 1024;

export class CaptionParseError extends Error {
  constructor(
    /** 1-based line of the file where reading stopped. */
    readonly line: number,
    what: string,
  ) {
    super(`line ${line}: ${what}`);
    this.name = "CaptionParseError";
  }
}

/** One line of the file with its 1-based number. */
interface Line {
  number: number;
  text: string;
}

const ARROW = "-->";
const SRT_EXAMPLE = '"00:00:01,000 --> 00:00:02,500"';
const VTT_EXAMPLE = '"00:01.000 --> 00:02.500"';

/**
 * Seconds of a timestamp: `H:MM:SS,mmm` (SRT, which also takes a dot) or `[H:]MM:SS.mmm`
 * (WebVTT); undefined for anything else.
 */
function parseTimestamp(value: string, format: "srt" | "vtt"): number | undefined {
  const pattern = format === "srt" ? /^(\d+):(\d{2}):(\d{2})[,.](\d{3})$/ : /^(?:(\d+):)?(\d{2}):(\d{2})\.(\d{3})$/;
  const match = pattern.exec(value);
  if (!match) return undefined;
  const [hours, minutes, seconds, millis] = [
    Number(match[1] ?? 0),
    Number(match[2]),
    Number(match[3]),
    Number(match[4]),
  ];
  if (minutes > 59 || seconds > 59) return undefined;
  // In whole milliseconds, so that 00:00:01,100 is exactly 1.1 and a cue reads back as it was written.
  return (hours * 3_600_000 + minutes * 60_000 + seconds * 1000 + millis) / 1000;
}

function parseTiming(line: Line, format: "srt" | "vtt"): { start: number; end: number } {
  const [left, right = ""] = line.text.split(ARROW);
  // WebVTT puts cue settings after the end time ("line:0 align:start"); the renderer places captions itself.
  const start = parseTimestamp(left.trim(), format);
  const end = parseTimestamp(right.trim().split(/[ \t]+/)[0], format);
  if (start === undefined || end === undefined) {
    throw new CaptionParseError(
      line.number,
      `expected a time range such as ${format === "srt" ? SRT_EXAMPLE : VTT_EXAMPLE}, found "${line.text.slice(0, 80)}"`,
    );
  }
  if (end <= start) throw new CaptionParseError(line.number, "the cue must end after it starts");
  return { start, end };
}

const ENTITIES: Record<string, string> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&apos;": "'",
  "&nbsp;": "\u00a0",
  "&lrm;": "\u200e",
  "&rlm;": "\u200f",
};

/** A cue's lines as drawn: markup dropped, references decoded (WebVTT), blank lines gone. */
function cueText(lines: Line[], format: "srt" | "vtt"): string {
  return lines
    .map((l) => l.text.replace(/<[^>]*>/g, "").replace(/\{\\[^}]*\}/g, ""))
    .map((text) => (format === "vtt" ? text.replace(/&[a-z]+;/g, (entity) => ENTITIES[entity] ?? entity) : text))
    .map((text) => text.trimEnd())
    .filter((text) => text.trim() !== "")
    .join("\n");
}

/**
 * Lines a block may hold: a cue's text lines are drawn one drawtext each, and a timeline draws at
 * most MAX_TEXT_LINES (its number and timing line besides). No WebVTT header, note or style sheet
 * needs more.
 */
export const MAX_BLOCK_LINES = MAX_TEXT_LINES + 2;

/**
 * Runs of non-blank lines, each a block of the file (a cue, a WebVTT header or note), one at a
 * time: the caller stops at the cue limit, so a file of a million lines is never held as a
 * million lines, and a block past MAX_BLOCK_LINES stops the read where it crosses the limit.
 */
function* blocksOf(text: string): Generator<Line[]> {
  const breaks = /\r\n|\r|\n/g;
  let current: Line[] = [];
  let number = 0;
  let start = 0;
  while (start <= text.length) {
    const found = breaks.exec(text);
    const end = found ? found.index : text.length;
    const raw = text.slice(start, end);
    number += 1;
    start = found ? breaks.lastIndex : text.length + 1;
    if (raw.trim() === "") {
      if (current.length > 0) yield current;
      current = [];
      continue;
    }
    if (current.length === MAX_BLOCK_LINES)
      throw new CaptionParseError(number, `a cue of more than ${MAX_BLOCK_LINES} lines, more than a timeline draws`);
    current.push({ number, text: raw });
  }
  if (current.length > 0) yield current;
}

/** One cue block: its timing line (after an optional identifier), then its text. */
function readCue(block: Line[], format: "srt" | "vtt"): CaptionCue {
  const timingAt = block.findIndex((line) => line.text.includes(ARROW));
  // SRT numbers its cues; WebVTT may name them. Either is one line before the timing.
  if (timingAt < 0 || timingAt > 1) {
    const line = block[Math.min(1, block.length - 1)];
    throw new CaptionParseError(
      line.number,
      `expected a time range such as ${format === "srt" ? SRT_EXAMPLE : VTT_EXAMPLE}, found "${line.text.slice(0, 80)}"`,
    );
  }
  if (format === "srt" && timingAt === 1 && !/^\d+$/.test(block[0].text.trim())) {
    throw new CaptionParseError(block[0].number, `expected the cue's number, found "${block[0].text.slice(0, 80)}"`);
  }
  const timing = parseTiming(block[timingAt], format);
  const text = cueText(block.slice(timingAt + 1), format);
  if (text === "") throw new CaptionParseError(block[timingAt].number, "the cue has no text");
  return { ...timing, text };
}

/** WebVTT blocks that hold no cue: the header's continuation, comments, style sheets and regions. */
const isVttMetadata = (block: Line[]) => /^(NOTE|STYLE|REGION)([ \t]|$)/.test(block[0].text);

/**
 * The cues of an SRT or WebVTT file, sorted by start (stable: cues that start together keep the
 * file's order). Throws `CaptionParseError` for what it cannot read, and for a file of no cues.
 */
export function parseCaptions(content: string): CaptionCue[] {
  const text = content.replace(/^\uFEFF/, "");
  const vtt = /^WEBVTT([ \t]|$)/.test(text.split(/\r\n|\r|\n/, 1)[0]);
  if (!vtt && /^WEBVTT/i.test(text))
    throw new CaptionParseError(1, 'a WebVTT file starts with "WEBVTT" on a line of its own');
  const cues: CaptionCue[] = [];
  let header = vtt;
  for (const block of blocksOf(text)) {
    if (header) {
      header = false;
      continue;
    }
    if (vtt && isVttMetadata(block)) continue;
    if (cues.length === MAX_CUES)
      throw new CaptionParseError(block[0].number, `more than ${MAX_CUES} cues, the most a caption clip takes`);
    cues.push(readCue(block, vtt ? "vtt" : "srt"));
  }
  if (cues.length === 0) throw new CaptionParseError(1, "the file holds no cues");
  // Array sorting is stable: cues that start together keep the file's order.
  return cues.sort((a, b) => a.start - b.start);
}
