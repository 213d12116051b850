import { ffmpeg } from "./media";
import type { Rgb } from "./frames";

/**
 * A source whose every frame says which source frame it is, and whose sound says what source
 * time it is, so a test can tell from the output alone which part of the source is playing:
 *
 * - Picture, 320x240: the frame number N in binary across 8 columns of 40 px (least significant
 *   bit on the left), white for 1 and black for 0, in the band y 0–59; its complement (black
 *   for 1) in the band y 60–119; mid grey below. Any other picture (a colour, black, a
 *   different clip) fails the complement check, so it cannot be misread as a frame number.
 *   Up to 255 frames.
 * - Sound: a 440 Hz sine whose level rises by exactly COUNTER_DB_PER_SECOND dB per source
 *   second (-43 dB mean at t = 0.5 s), so the level difference between two windows is the
 *   source-time difference between them times that slope, whatever gain sits in between.
 */
const COUNTER_SIZE = { width: 320, height: 240 };
const COUNTER_COLUMNS = 8;
/** The cell grid `everyFrame` should sample counter output with: 8 columns x 4 bands of 60 px. */
export const COUNTER_GRID = { cols: COUNTER_COLUMNS, rows: 4 };
export const COUNTER_DB_PER_SECOND = 6;

export async function makeCounterSource(path: string, opts: { seconds: number; fps: number }) {
  const { seconds, fps } = opts;
  if (seconds * fps > 255) throw new Error("the counter has 8 bits: at most 255 frames");
  const bit = `mod(floor(N/pow(2,floor(X/40))),2)`;
  const lum = `16+219*if(lt(Y,60),${bit},if(lt(Y,120),1-${bit},0.5))`;
  const gain = COUNTER_DB_PER_SECOND / 20;
  await ffmpeg([
    "-f",
    "lavfi",
    "-i",
    `color=c=black:size=${COUNTER_SIZE.width}x${COUNTER_SIZE.height}:rate=${fps}:duration=${seconds},format=yuv420p,geq=lum='${lum}':cb=128:cr=128`,
    "-f",
    "lavfi",
    "-i",
    `aevalsrc=exprs='0.01*pow(10,${gain}*t)*sin(2*PI*440*t)':s=48000:d=${seconds}`,
    "-ac",
    "2",
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-pix_fmt",
    "yuv420p",
    "-g",
    String(fps),
    "-c:a",
    "aac",
    "-b:a",
    "128k",
    path,
  ]);
}

const grey = ([r, g, b]: Rgb) => Math.abs(r - g) < 40 && Math.abs(g - b) < 40 && Math.abs(r - b) < 40;
const bitOf = ([r]: Rgb) => (r > 170 ? 1 : r < 85 ? 0 : undefined);

/**
 * The source frame number a counter frame shows, read from `everyFrame(path, 8, 4)` cells; null
 * when the picture is not a counter frame (bands not grey, not clearly black or white, or the
 * second band not the complement of the first).
 */
export function readCounter(cells: Rgb[][]): number | null {
  let n = 0;
  for (let c = 0; c < COUNTER_COLUMNS; c++) {
    const top = cells[0][c];
    const under = cells[1][c];
    if (!grey(top) || !grey(under)) return null;
    const b = bitOf(top);
    const inverse = bitOf(under);
    if (b === undefined || inverse === undefined || b + inverse !== 1) return null;
    n += b << c;
  }
  return n;
}
