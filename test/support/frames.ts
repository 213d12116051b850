import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The RGB colour of pixel (x, y) in the frame shown at `seconds`. */
export async function pixelAt(path: string, seconds: number, x: number, y: number): Promise<[number, number, number]> {
  const { stdout: size } = await run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width", "-of", "csv=p=0", path]);
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
  const { stderr } = await run("ffmpeg", ["-hide_banner", "-nostats", "-ss", String(start), "-t", String(duration), "-i", path, "-vn", "-af", af, "-f", "null", "-"]);
  const read = (name: string) => {
    const m = new RegExp(`${name}: (-?[\\d.]+|-inf) dB`).exec(stderr);
    if (!m) throw new Error(`no ${name} in volumedetect output`);
    return m[1] === "-inf" ? -Infinity : Number(m[1]);
  };
  return { mean: read("mean_volume"), max: read("max_volume") };
}
