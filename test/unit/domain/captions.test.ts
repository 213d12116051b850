import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CaptionParseError, MAX_BLOCK_LINES, MAX_CAPTION_BYTES, parseCaptions } from "../../../domain/captions";
import type { CaptionCue } from "../../../domain/edl/validated-edl";

/** The error `parseCaptions` throws on `text`, as `line N: what`. */
function failure(text: string): { line: number; message: string } {
  try {
    parseCaptions(text);
  } catch (error) {
    if (error instanceof CaptionParseError) return { line: error.line, message: error.message };
    throw error;
  }
  throw new Error("parsed");
}

const clock = (seconds: number, separator: "," | ".") => {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, width = 2) => String(n).padStart(width, "0");
  const [h, m, s] = [Math.floor(ms / 3_600_000), Math.floor(ms / 60_000) % 60, Math.floor(ms / 1000) % 60];
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
};
const srtOf = (cues: CaptionCue[]) =>
  cues.map((c, i) => `${i + 1}\n${clock(c.start, ",")} --> ${clock(c.end, ",")}\n${c.text}\n`).join("\n");
const vttOf = (cues: CaptionCue[]) =>
  `WEBVTT\n\n${cues.map((c) => `${clock(c.start, ".")} --> ${clock(c.end, ".")}\n${c.text}\n`).join("\n")}`;

describe("docs/timelines.md version 1.1 › caption files: SRT", () => {
  it("reads numbered cues, multi-line text, CRLF and a byte-order mark", () => {
    const srt =
      "\uFEFF1\r\n00:00:01,000 --> 00:00:02,500\r\nHello\r\nthere\r\n\r\n2\r\n01:02:03,004 --> 01:02:04,000\r\nBye\r\n";
    expect(parseCaptions(srt)).toEqual([
      { start: 1, end: 2.5, text: "Hello\nthere" },
      { start: 3723.004, end: 3724, text: "Bye" },
    ]);
  });

  it("drops markup drawtext would draw as text, and sorts the cues by start", () => {
    const srt =
      '1\n00:00:05,000 --> 00:00:06,000\n{\\an8}<i>Late</i> <font color="red">one</font>\n\n2\n00:00:01,000 --> 00:00:02,000\n<b>Early</b>\n';
    expect(parseCaptions(srt)).toEqual([
      { start: 1, end: 2, text: "Early" },
      { start: 5, end: 6, text: "Late one" },
    ]);
  });

  it.each([
    [
      "1\n00:00:01 --> 00:00:02,000\nx\n",
      2,
      'line 2: expected a time range such as "00:00:01,000 --> 00:00:02,500", found "00:00:01 --> 00:00:02,000"',
    ],
    [
      "1\n00:00:01,000 --> 00:00:02,000\nx\n\n2\n00:00:03,000 --> 00:00:02,000\ny\n",
      6,
      "line 6: the cue must end after it starts",
    ],
    ["1\n00:00:01,000 --> 00:00:02,000\n\n", 2, "line 2: the cue has no text"],
    ["one\n00:00:01,000 --> 00:00:02,000\nx\n", 1, 'line 1: expected the cue\'s number, found "one"'],
    ["1\nHello\nthere\n", 2, 'line 2: expected a time range such as "00:00:01,000 --> 00:00:02,500", found "Hello"'],
    ["1\n00:61:01,000 --> 00:62:02,000\nx\n", 2, expect.stringContaining("line 2: expected a time range")],
    ["", 1, "line 1: the file holds no cues"],
    ["\n\n  \n", 1, "line 1: the file holds no cues"],
  ])("%j fails at line %i", (text, line, message) => {
    expect(failure(text)).toEqual({ line, message });
  });
});

describe("docs/timelines.md version 1.1 › caption files: the most cues", () => {
  it("5000 cues are read; the 5001st fails at its first line", () => {
    const cues = (n: number) => Array.from({ length: n }, (_, i) => ({ start: i, end: i + 0.5, text: "x" }));
    expect(parseCaptions(srtOf(cues(5000)))).toHaveLength(5000);
    expect(failure(srtOf(cues(5001)))).toEqual({
      line: 5000 * 4 + 1,
      message: "line 20001: more than 5000 cues, the most a caption clip takes",
    });
  });

  it("a cue of more lines than a timeline draws fails where it crosses the limit", () => {
    const lines = (n: number) => Array.from({ length: n }, () => "x").join("\n");
    expect(parseCaptions(`1\n00:00:01,000 --> 00:00:02,000\n${lines(MAX_BLOCK_LINES - 2)}\n`)).toHaveLength(1);
    expect(failure(`1\n00:00:01,000 --> 00:00:02,000\n${lines(MAX_BLOCK_LINES - 1)}\n`)).toEqual({
      line: MAX_BLOCK_LINES + 1,
      message: `line ${MAX_BLOCK_LINES + 1}: a cue of more than ${MAX_BLOCK_LINES} lines, more than a timeline draws`,
    });
  });

  it.each([
    ["one-character lines", "a\n", MAX_BLOCK_LINES + 1],
    ["one-character cues", "a\n\n", 1],
  ])("a caption file's worth of %s stops at the first limit it crosses", (_name, unit, line) => {
    expect(failure(unit.repeat(Math.floor(MAX_CAPTION_BYTES / unit.length))).line).toBe(line);
  });
});

describe("docs/timelines.md version 1.1 › caption files: WebVTT", () => {
  it("skips the header, notes, styles and regions; takes identifiers, settings, hourless times and references", () => {
    const vtt = [
      "WEBVTT - a title",
      "Kind: captions",
      "",
      "NOTE a comment",
      "over two lines",
      "",
      "STYLE",
      "::cue { color: yellow }",
      "",
      "intro",
      "00:01.000 --> 00:02.000 line:0 align:start",
      "<v Roger>Fish &amp; chips</v>",
      "",
      "01:00:00.500 --> 01:00:01.000",
      "<c.loud>Late</c>",
    ].join("\n");
    expect(parseCaptions(vtt)).toEqual([
      { start: 1, end: 2, text: "Fish & chips" },
      { start: 3600.5, end: 3601, text: "Late" },
    ]);
  });

  it.each([
    [
      "WEBVTT\n\n00:01,000 --> 00:02.000\nx\n",
      3,
      'line 3: expected a time range such as "00:01.000 --> 00:02.500", found "00:01,000 --> 00:02.000"',
    ],
    ["WEBVTT\n\nid\nmore\n00:01.000 --> 00:02.000\nx\n", 4, expect.stringContaining("line 4: expected a time range")],
    ["WEBVTT\n\nNOTE only\n", 1, "line 1: the file holds no cues"],
    ["WEBVTTX\n\n00:01.000 --> 00:02.000\nx\n", 1, 'line 1: a WebVTT file starts with "WEBVTT" on a line of its own'],
  ])("%j fails at line %i", (text, line, message) => {
    expect(failure(text)).toEqual({ line, message });
  });
});

describe("property: formatting cues as SRT or WebVTT and parsing them back gives the same cues", () => {
  const line = fc
    .string({ unit: fc.constantFrom(..."abcXYZ 019.,!?'é—"), minLength: 1, maxLength: 30 })
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const cues = fc
    .array(
      fc.record({
        start: fc.integer({ min: 0, max: 36_000_000 }),
        length: fc.integer({ min: 1, max: 60_000 }),
        lines: fc.array(line, { minLength: 1, maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 20 },
    )
    .map((list) =>
      list
        .map(({ start, length, lines }) => ({
          start: start / 1000,
          end: (start + length) / 1000,
          text: lines.join("\n"),
        }))
        .sort((a, b) => a.start - b.start),
    );

  it.each([
    ["SRT", srtOf],
    ["WebVTT", vttOf],
  ])("%s", (_, format) => {
    fc.assert(
      fc.property(cues, (list) => {
        expect(parseCaptions(format(list))).toEqual(list);
      }),
      { numRuns: 300 },
    );
  });

  it("any text either parses into well-formed cues or fails with its line", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          cues.map(srtOf).map((s) => s.replace(/,/, ".")),
        ),
        (text) => {
          try {
            for (const cue of parseCaptions(text)) {
              expect(cue.end).toBeGreaterThan(cue.start);
              expect(cue.text.trim()).not.toBe("");
            }
          } catch (error) {
            expect(error).toBeInstanceOf(CaptionParseError);
            expect((error as CaptionParseError).message).toMatch(/^line [1-9]\d*: /);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
