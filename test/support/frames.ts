import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The RGB colour of pixel (x, y) in the frame shown at `seconds`. */
export async function pixelAt(path: string, seconds: number, x: number, y: number): Promise<[number, number, number]> {
  const { stdout: size } = await run("ffprobe", [
    "-v",
    "error",
    "-select_streams",
    "v:0",
    "-show_entries",
    "stream=width",
    "-of",
    "csv=p=0",
    path,
  ]);
  const width = Number(size.trim());
  const { stdout } = (await run(
    "ffmpeg",
    ["-v", "error", "-ss", String(seconds), "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
    { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
  )) as unknown as { stdout: Buffer };
  const offset = (y * width + x) * 3;
  return [stdout[offset], stdout[offset + 1], stdout[offset + 2]];
}

export function closeTo(actual: [number, number, number], expected: [number, number, number], tolerance = 24): boolean {
  return actual.every((v, i) => Math.abs(v - expected[i]) <= tolerance);
}

/** volumedetect over [start, start + duration), optionally after a filter (e.g. a highpass). */
export async function volume(path: string, start: number, duration: number, filter?: string) {
  const af = [filter, "volumedetect"].filter(Boolean).join(",");
  const { stderr } = await run("ffmpeg", [
    "-hide_banner",
    "-nostats",
    "-ss",
    String(start),
    "-t",
    String(duration),
    "-i",
    path,
    "-vn",
    "-af",
    af,
    "-f",
    "null",
    "-",
  ]);
  const read = (name: string) => {
    const m = new RegExp(`${name}: (-?[\\d.]+|-inf) dB`).exec(stderr);
    if (!m) throw new Error(`no ${name} in volumedetect output`);
    return m[1] === "-inf" ? -Infinity : Number(m[1]);
  };
  return { mean: read("mean_volume"), max: read("max_volume") };
}

export type Rgb = [number, number, number];

/** One decoded frame as RGB, for checking many pixels with one FFmpeg run. */
export interface Frame {
  width: number;
  height: number;
  pixel(x: number, y: number): Rgb;
}

/** The frame shown at `seconds`, decoded once. */
export async function frameAt(path: string, seconds: number): Promise<Frame> {
  const { stdout: size } = await run("ffprobe", [
    "-v",
    "error",
    "-select_streams",
    "v:0",
    "-show_entries",
    "stream=width,height",
    "-of",
    "csv=p=0",
    path,
  ]);
  const [width, height] = size.trim().split(",").map(Number);
  const { stdout } = (await run(
    "ffmpeg",
    ["-v", "error", "-ss", String(seconds), "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
    { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
  )) as unknown as { stdout: Buffer };
  if (stdout.length < width * height * 3) throw new Error(`no frame at ${seconds} s in ${path}`);
  return {
    width,
    height,
    pixel(x, y) {
      if (x < 0 || y < 0 || x >= width || y >= height)
        throw new Error(`pixel (${x}, ${y}) is outside the ${width}x${height} frame`);
      const o = (y * width + x) * 3;
      return [stdout[o], stdout[o + 1], stdout[o + 2]];
    },
  };
}

/**
 * Every frame of the first video stream (of a file, or an HLS playlist's segments) as decoded,
 * one after another, each area-scaled to `width` x `height` in `pixelFormat`. Frames pass
 * through as decoded (`-fps_mode passthrough`): none is dropped or repeated, which would hide
 * the very faults the callers look for.
 */
export async function rawFrames(
  path: string,
  { width, height, pixelFormat }: { width: number; height: number; pixelFormat: "rgb24" | "gray" },
): Promise<Buffer> {
  const { stdout } = (await run(
    "ffmpeg",
    [
      "-v",
      "error",
      ...(path.endsWith(".m3u8") ? ["-allowed_extensions", "ALL"] : []),
      "-i",
      path,
      "-map",
      "0:v:0",
      "-fps_mode",
      "passthrough",
      "-vf",
      `scale=${width}:${height}:flags=area`,
      "-pix_fmt",
      pixelFormat,
      "-f",
      "rawvideo",
      "-",
    ],
    { encoding: "buffer", maxBuffer: 1024 * 1024 * 1024 },
  )) as unknown as { stdout: Buffer };
  return stdout;
}

/**
 * Every frame of the first video stream, in presentation order, each averaged down to a
 * `cols` x `rows` grid of cells (area scaling: each cell is the mean colour of its block), with
 * the frame's presentation time. No frame is dropped or duplicated.
 */
export async function everyFrame(
  path: string,
  cols: number,
  rows: number,
): Promise<{ time: number; cells: Rgb[][] }[]> {
  const { stdout: times } = await run(
    "ffprobe",
    ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0", path],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const pts = times
    .split("\n")
    .map((l) => l.split(",")[0].trim())
    .filter(Boolean)
    .map(Number);
  const stdout = await rawFrames(path, { width: cols, height: rows, pixelFormat: "rgb24" });
  const frameBytes = cols * rows * 3;
  if (stdout.length !== pts.length * frameBytes) {
    throw new Error(`${stdout.length / frameBytes} decoded frames but ${pts.length} frame times in ${path}`);
  }
  return pts.map((time, f) => ({
    time,
    cells: Array.from({ length: rows }, (_, r) =>
      Array.from({ length: cols }, (_, c): Rgb => {
        const o = f * frameBytes + (r * cols + c) * 3;
        return [stdout[o], stdout[o + 1], stdout[o + 2]];
      }),
    ),
  }));
}

/** Seconds of audio the first audio stream decodes to (sample count / rate, after any edit list). */
export async function decodedAudioSeconds(path: string): Promise<number> {
  const { stdout } = (await run(
    "ffmpeg",
    ["-v", "error", "-i", path, "-map", "0:a:0", "-ac", "1", "-ar", "48000", "-f", "s16le", "-"],
    { encoding: "buffer", maxBuffer: 256 * 1024 * 1024 },
  )) as unknown as { stdout: Buffer };
  return stdout.length / 2 / 48000;
}

/**
 * The largest hole between consecutive packets of the first audio stream (a packet starting
 * later than the previous one ended), in seconds; 0 when the stream is continuous.
 */
export async function largestAudioHole(path: string): Promise<number> {
  const { stdout } = await run(
    "ffprobe",
    ["-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts_time,duration_time", "-of", "csv=p=0", path],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  const packets = stdout
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => l.split(",").map(Number))
    .sort((a, b) => a[0] - b[0]);
  if (packets.length === 0) throw new Error(`no audio packets in ${path}`);
  let hole = 0;
  for (let i = 1; i < packets.length; i++)
    hole = Math.max(hole, packets[i][0] - (packets[i - 1][0] + packets[i - 1][1]));
  return hole;
}
