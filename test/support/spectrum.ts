import { execFile } from "node:child_process";
import { promisify } from "node:util";
import FFT from "fft.js";

const run = promisify(execFile);
const RATE = 48000;

/** The first audio stream's samples over [start, start + seconds), mono, as floats. */
export async function samplesOf(path: string, start: number, seconds: number): Promise<Float32Array> {
  const { stdout } = (await run(
    "ffmpeg",
    ["-v", "error", "-ss", String(start), "-t", String(seconds), "-i", path, "-map", "0:a:0", "-ac", "1"].concat([
      "-ar",
      String(RATE),
      "-f",
      "f32le",
      "-",
    ]),
    { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
  )) as unknown as { stdout: Buffer };
  return new Float32Array(stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length));
}

/** Root mean square of the samples (0 is silence, a full-scale sine about 0.7). */
export function rms(samples: Float32Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

/**
 * The strongest frequencies (Hz, to the FFT's bin) of 4096 samples from `samples`' middle, under a
 * Hann window, strongest first; peaks closer than 50 Hz to a stronger one are the same tone.
 */
export function strongestTones(samples: Float32Array, count: number): { hz: number; level: number }[] {
  const size = 4096;
  const from = Math.max(0, Math.floor((samples.length - size) / 2));
  const fft = new FFT(size);
  const input = new Array<number>(size).fill(0);
  for (let i = 0; i < size; i++)
    input[i] = (samples[from + i] ?? 0) * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (size - 1)));
  const out = fft.createComplexArray() as number[];
  fft.realTransform(out, input);
  const bins = Array.from({ length: size / 2 }, (_, k) => ({
    hz: (k * RATE) / size,
    level: Math.hypot(out[2 * k], out[2 * k + 1]),
  }));
  const peaks: { hz: number; level: number }[] = [];
  for (const bin of [...bins].sort((a, b) => b.level - a.level)) {
    if (peaks.some((p) => Math.abs(p.hz - bin.hz) < 50)) continue;
    peaks.push(bin);
    if (peaks.length === count) break;
  }
  return peaks;
}
