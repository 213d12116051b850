import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ffmpeg } from "./media.ts";

/**
 * SSIM of every frame of `output` against the same frame of `reference` (its source), from FFmpeg's
 * ssim filter, the output scaled to the reference's size first. Both start from time 0
 * (`setpts=PTS-STARTPTS`), so an HLS playlist's offset does not pair the wrong frames; the frames
 * are paired in order, so the output must hold every source frame (frame-order.ts checks that).
 */
async function ssimPerFrame(output: string, reference: string): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), "ssim-"));
  try {
    const stats = join(dir, "ssim.log");
    await ffmpeg([
      ...(output.endsWith(".m3u8") ? ["-allowed_extensions", "ALL"] : []),
      "-i",
      output,
      "-i",
      reference,
      "-lavfi",
      // scale2ref sizes the output like the reference whatever either's size.
      `[0:v:0][1:v:0]scale2ref=flags=bicubic[out][ref];[out]setpts=PTS-STARTPTS[a];[ref]setpts=PTS-STARTPTS[b];[a][b]ssim=stats_file=${stats}`,
      "-f",
      "null",
      "-",
    ]);
    // One line a frame: "n:1 Y:0.98 U:0.99 V:0.99 All:0.985 (18.3)".
    return (await readFile(stats, "utf8"))
      .trim()
      .split("\n")
      .map((line) => {
        const all = /All:([\d.]+)/.exec(line);
        if (!all) throw new Error(`unexpected ssim line: ${line}`);
        return Number(all[1]);
      });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The SSIM of `output` against `reference` at each of `frames` (0-based source frame numbers, e.g.
 * a split encode's cuts), and the mean over every other frame: a cut encoded worse than the
 * parts' interiors shows as a value well below that mean.
 */
export async function ssimAt(
  output: string,
  reference: string,
  frames: readonly number[],
): Promise<{ at: number[]; interiorMean: number }> {
  const perFrame = await ssimPerFrame(output, reference);
  const at = frames.map((f) => {
    if (f >= perFrame.length) throw new Error(`frame ${f} is past the ${perFrame.length} frames compared`);
    return perFrame[f];
  });
  const interior = perFrame.filter((_, i) => !frames.includes(i));
  return { at, interiorMean: interior.reduce((sum, v) => sum + v, 0) / interior.length };
}
