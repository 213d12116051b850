import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CaptionClip } from "../../../domain/edl/validated-edl";
import { fontKey } from "../../../encoder/timeline/compile";
import { resolveFont } from "../../../encoder/timeline/fonts";
import { type Frame, frameAt } from "../../support/frames";
import { flat, mediaOf, renderTimeline, timeline11, videoClip } from "../../support/timeline-render";

const BG = "https://media.example.com/blue.mp4";
let dir: string;
let output: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "captions-"));
  await flat(join(dir, "blue.mp4"), "blue", 2, 440);
  const captions: CaptionClip = {
    id: "subs",
    startTime: 0.1,
    cues: [
      { start: 0.2, end: 0.8, text: "ONE" },
      { start: 1.2, end: 1.6, text: "TWO\nLINES" },
    ],
    fontSize: 20,
    fontColor: "#FFFFFF",
    fontFamily: "DejaVu Sans",
    fontWeight: "bold",
    textAlign: "center",
    position: { x: "center", y: "bottom" },
    background: { color: "#000000", opacity: 0.5, padding: 6 },
  };
  const edl = timeline11([
    { type: "video", clips: [videoClip({ id: "bg", src: BG, out: 2 })] },
    { type: "caption", clips: [captions] },
  ]);
  ({ output } = await renderTimeline(dir, "captions", edl, {
    media: new Map([[BG, mediaOf(join(dir, "blue.mp4"))]]),
    fonts: new Map([[fontKey(captions), await resolveFont("DejaVu Sans", "bold")]]),
  }));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Rows holding white ink (the text; the blue picture and the dark box have none). */
function inkRows(frame: Frame): number[] {
  const rows = new Set<number>();
  for (let y = 0; y < frame.height; y++)
    for (let x = 0; x < frame.width; x++) if (Math.min(...frame.pixel(x, y)) > 200) rows.add(y);
  return [...rows];
}

describe("1.1 caption track: each cue drawn in the clip's style only during its interval", () => {
  it("a cue's text appears from its start to its end (offset by the clip's startTime), and not outside", async () => {
    // Cue one: 0.3..0.9 s; cue two: 1.3..1.7 s.
    for (const t of [0.2, 1.0, 1.2, 1.8]) expect(inkRows(await frameAt(output, t)), `at ${t} s`).toEqual([]);
    for (const t of [0.32, 0.6, 0.86, 1.32, 1.5, 1.66]) {
      const rows = inkRows(await frameAt(output, t));
      expect(rows.length, `at ${t} s`).toBeGreaterThan(5);
      // At the bottom of the frame, as the clip's position says.
      expect(Math.min(...rows), `at ${t} s`).toBeGreaterThan(60);
    }
  });

  it("a cue of two lines draws both, one above the other", async () => {
    const one = inkRows(await frameAt(output, 0.6));
    const two = inkRows(await frameAt(output, 1.5));
    expect(Math.max(...two) - Math.min(...two)).toBeGreaterThan(1.5 * (Math.max(...one) - Math.min(...one)));
  });
});
