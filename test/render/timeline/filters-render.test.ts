import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FilterType } from "../../../domain/edl/validated-edl";
import { frameAt, type Rgb } from "../../support/frames";
import { flat, mediaOf, quadrants, renderTimeline, timeline11, videoClip } from "../../support/timeline-render";

const DULL = "https://media.example.com/dull.mp4";
const QUADRANTS = "https://media.example.com/quadrants.mp4";
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "filters-"));
  await Promise.all([flat(join(dir, "dull.mp4"), "0x9A6A6A", 1, 440), quadrants(join(dir, "quadrants.mp4"), 1)]);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** One clip of 0.4 s per entry, each with its filters, in a row; the centre pixel of each. */
async function colours(src: string, rows: FilterType[][], x: number, y: number): Promise<Rgb[]> {
  const edl = timeline11([
    {
      type: "video",
      clips: rows.map((filters, i) =>
        videoClip({
          id: `c${i}`,
          src,
          out: 0.4,
          startTime: i * 0.4,
          filters: filters.map((type) => ({ type, strength: 1 })),
        }),
      ),
    },
  ]);
  const { output } = await renderTimeline(dir, `row-${rows.length}-${x}`, edl, {
    media: new Map([
      [DULL, mediaOf(join(dir, "dull.mp4"))],
      [QUADRANTS, mediaOf(join(dir, "quadrants.mp4"))],
    ]),
  });
  return Promise.all(rows.map(async (_, i) => (await frameAt(output, i * 0.4 + 0.2)).pixel(x, y)));
}

/** How far the colour is from its own grey (chroma), and its mean (brightness). */
const chroma = ([r, g, b]: Rgb) => Math.max(r, g, b) - Math.min(r, g, b);
const mean = ([r, g, b]: Rgb) => (r + g + b) / 3;

describe("1.1 filters that change contrast and saturation move a dull pink the way they are named", () => {
  it("contrast spreads it from the middle grey; saturate, boost add colour; muted takes it away", async () => {
    const [plain, contrast, saturate, boost, muted] = await colours(
      DULL,
      [[], ["contrast"], ["saturate"], ["boost"], ["muted"]],
      80,
      60,
    );
    // The pink (154, 106, 106) is below the middle: more contrast darkens it.
    expect(mean(contrast), `${contrast} against ${plain}`).toBeLessThan(mean(plain) - 10);
    expect(chroma(saturate), `${saturate} against ${plain}`).toBeGreaterThan(chroma(plain) + 20);
    expect(chroma(boost), `${boost} against ${plain}`).toBeGreaterThan(chroma(plain) + 10);
    expect(chroma(muted), `${muted} against ${plain}`).toBeLessThan(chroma(plain) - 10);
  });
});

describe("1.1 sharpen", () => {
  it("steepens a blurred edge: across red and lime's border, the step in brightness between two pixels grows", async () => {
    // sharpen works on brightness (luma) alone.
    const step = async (rows: FilterType[][]) => {
      const left = await colours(QUADRANTS, rows, 78, 30);
      const right = await colours(QUADRANTS, rows, 81, 30);
      return left.map((l, i) => Math.abs(mean(l) - mean(right[i])));
    };
    const [blurred, sharpened] = await step([["blur"], ["blur", "sharpen"]]);
    expect(sharpened, `blurred ${blurred}, sharpened ${sharpened}`).toBeGreaterThan(blurred * 1.2);
  });
});
