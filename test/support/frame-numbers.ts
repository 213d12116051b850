import type { FrameRate } from "../../domain/split.ts";
import { rawFrames } from "./frames.ts";
import { ffmpeg } from "./media.ts";
import { madeOnce } from "./media-cache.ts";

/**
 * Bits of the frame number each frame carries: 2^16 frames, over 36 minutes at 30 fps, more than any
 * test source needs. The blocks stay 16 to a row so that at 240p each is still about 26 pixels wide.
 */
const BITS = 16;
/**
 * Each of the barcode's two rows, as a fraction of the picture's height: the bits, then their
 * complements, so that a frame without the code (black, smeared) reads as unreadable rather than
 * as some number.
 */
const ROW_FRACTION = 1 / 8;
/** The size every output is scaled to before reading: reading needs only the blocks' centres. */
const READ_W = 256;
const READ_H = 144;

export interface NumberedSourceOptions {
  seconds: number;
  fps: FrameRate;
  width: number;
  height: number;
  audio: boolean;
  /** A keyframe every this many seconds (rounded to whole frames), exactly; the encoder's default otherwise. */
  keyframeSeconds?: number;
  codec?: "h264" | "vp9";
}

/**
 * drawbox's fill of one block, `on` picking the frames it is drawn on (an expression of the frame
 * number n). The blocks share out the whole width, as readOne expects, whatever the width.
 */
function block(bit: number, row: number, width: number, height: number, on: string): string {
  const x = Math.floor((bit * width) / BITS);
  const w = Math.floor(((bit + 1) * width) / BITS) - x;
  const h = Math.floor(height * ROW_FRACTION);
  return `drawbox=x=${x}:y=${row * h}:w=${w}:h=${h}:color=white:t=fill:enable='${on}'`;
}

/**
 * A source whose every frame shows its own number (0-based) as a barcode over testsrc2's pattern,
 * which leaves the rest of the picture detailed enough to cost bits to encode; with audio, one
 * unbroken 440 Hz sine tone, so any gap or splice in an output's audio shows as a jump. Made
 * once for the same options and container (test/support/media-cache.ts), copied to `path`.
 */
export async function makeNumberedSource(path: string, opts: NumberedSourceOptions): Promise<void> {
  const args = numberedSourceArgs(opts);
  await madeOnce(path, { numberedSource: args }, (draft) => ffmpeg([...args, draft]));
}

/** FFmpeg's arguments for a numbered source, all but the output's path. */
function numberedSourceArgs(opts: NumberedSourceOptions): string[] {
  const { seconds, fps, width, height, audio, keyframeSeconds, codec = "h264" } = opts;
  const rate = `${fps.num}/${fps.den}`;
  const rowH = Math.floor(height * ROW_FRACTION);
  const bars = [`drawbox=x=0:y=0:w=${width}:h=${2 * rowH}:color=black:t=fill`];
  for (let bit = 0; bit < BITS; bit++) {
    const set = `gte(mod(n,${2 ** (bit + 1)}),${2 ** bit})`;
    bars.push(block(bit, 0, width, height, set), block(bit, 1, width, height, `not(${set})`));
  }
  const gop = keyframeSeconds === undefined ? [] : gopArgs(Math.round((keyframeSeconds * fps.num) / fps.den), codec);
  return [
    "-f",
    "lavfi",
    "-i",
    `testsrc2=size=${width}x${height}:rate=${rate}:duration=${seconds},${bars.join(",")}`,
    ...(audio ? ["-f", "lavfi", "-i", `sine=frequency=440:sample_rate=48000:duration=${seconds}`, "-ac", "2"] : []),
    ...(codec === "h264"
      ? ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "20"]
      : ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-crf", "32", "-b:v", "0"]),
    "-pix_fmt",
    "yuv420p",
    ...gop,
    ...(audio ? (codec === "h264" ? ["-c:a", "aac", "-b:a", "128k"] : ["-c:a", "libopus", "-b:a", "128k"]) : []),
  ];
}

function gopArgs(frames: number, codec: "h264" | "vp9"): string[] {
  return codec === "h264"
    ? ["-g", String(frames), "-keyint_min", String(frames), "-sc_threshold", "0"]
    : ["-g", String(frames), "-keyint_min", String(frames)];
}

/**
 * The number read from every frame of `path`'s first video stream, in decoding's presentation
 * order, null where a frame shows no readable barcode. Any size with the source's shape, any
 * container FFmpeg reads (an HLS playlist too), every frame as decoded (rawFrames).
 */
export async function readFrameNumbers(path: string): Promise<(number | null)[]> {
  const stdout = await rawFrames(path, { width: READ_W, height: READ_H, pixelFormat: "gray" });
  const frameSize = READ_W * READ_H;
  const numbers: (number | null)[] = [];
  for (let offset = 0; offset + frameSize <= stdout.length; offset += frameSize) {
    numbers.push(readOne(stdout.subarray(offset, offset + frameSize)));
  }
  return numbers;
}

/** The mean of a 3x3 patch at a block's centre, so one noisy pixel cannot flip a bit. */
function level(frame: Buffer, bit: number, row: number): number {
  const blockW = READ_W / BITS;
  const cx = Math.floor((bit + 0.5) * blockW);
  const cy = Math.floor((row + 0.5) * READ_H * ROW_FRACTION);
  let sum = 0;
  for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) sum += frame[(cy + dy) * READ_W + cx + dx];
  return sum / 9;
}

function readOne(frame: Buffer): number | null {
  let n = 0;
  for (let bit = 0; bit < BITS; bit++) {
    const value = level(frame, bit, 0);
    const complement = level(frame, bit, 1);
    // A block and its complement must be clearly apart (black near 16, white near 235 in limited range).
    if (Math.abs(value - complement) < 100) return null;
    if (value > complement) n += 2 ** bit;
  }
  return n;
}
