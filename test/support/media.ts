import { execFile } from "node:child_process";
import { open } from "node:fs/promises";
import { promisify } from "node:util";
import { madeOnce } from "./media-cache.ts";

const run = promisify(execFile);

/** Runs FFmpeg quietly to make a fixture; lavfi sources only, nothing committed. */
export async function ffmpeg(args: string[]): Promise<void> {
  await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", ...args], { maxBuffer: 16 * 1024 * 1024 });
}

/** One stream as `ffprobe -show_streams` prints it: the fields the tests read. */
interface FfprobeStream {
  codec_type: string;
  codec_name: string;
  codec_tag_string: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  channels?: number;
  sample_rate?: string;
  /** Seconds, as a decimal string; absent where the container does not say. */
  duration?: string;
  /** With `-count_frames` only. */
  nb_read_frames?: string;
}

/** `ffprobe -show_format -show_streams`, as JSON: the fields the tests read. */
export interface FfprobeOutput {
  streams: FfprobeStream[];
  format: { duration?: string };
}

export async function ffprobeJson(path: string, inputOptions: string[] = []): Promise<FfprobeOutput> {
  const { stdout } = await run(
    "ffprobe",
    ["-v", "error", "-print_format", "json", "-show_format", "-show_streams", ...inputOptions, path],
    {
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  return JSON.parse(stdout);
}

/**
 * Stereo sound like music's for an encoder: two gliding voices, a steady one each and a little
 * noise. FFmpeg's AAC encoder takes several times as long over a pure tone as over this (its
 * rate loop works hardest on one), so a benchmark of the audio's time uses it (docs/benchmarks.md
 * gives the figure).
 */
const music = (seconds: number) => {
  const voice = (base: number, glide: number, steady: number, seed: number) =>
    `0.2*sin(2*PI*(${base}+20*sin(2*PI*${glide}*t))*t)+0.1*sin(2*PI*${steady}*t)+0.04*(random(${seed})-0.5)`;
  return `aevalsrc=exprs=${voice(220, 0.25, 330, 0)}|${voice(277, 0.3, 440, 1)}:sample_rate=48000:duration=${seconds}`;
};

/**
 * A test pattern with sound: `seconds` long, `width`x`height` at `fps`, stereo 48 kHz AAC in MP4.
 * The sound is a 440 Hz tone (what the audio checks read), or `music` (see above). Made once for
 * the same options (test/support/media-cache.ts), copied to `path`.
 */
export async function makeSource(
  path: string,
  opts: { seconds: number; width?: number; height?: number; fps?: number; audio?: boolean; sound?: "tone" | "music" },
) {
  const { seconds, width = 640, height = 360, fps = 30, audio = true, sound = "tone" } = opts;
  const sounds = { tone: `sine=frequency=440:sample_rate=48000:duration=${seconds}`, music: music(seconds) };
  const args = [
    "-f",
    "lavfi",
    "-i",
    `testsrc2=size=${width}x${height}:rate=${fps}:duration=${seconds}`,
    ...(audio ? ["-f", "lavfi", "-i", sounds[sound], "-ac", "2"] : []),
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-pix_fmt",
    "yuv420p",
    "-g",
    String(fps),
    ...(audio ? ["-c:a", "aac", "-b:a", "96k"] : []),
    "-movflags",
    "+faststart",
  ];
  await madeOnce(path, { source: args }, (draft) => ffmpeg([...args, draft]));
}

/**
 * The types of an ISO BMFF file's top-level boxes, in file order (`ftyp`, `moov`, `mdat`, …):
 * where the index sits against the media, which a faststart file puts first.
 */
export async function topLevelBoxes(path: string): Promise<string[]> {
  const file = await open(path);
  try {
    const { size } = await file.stat();
    const header = Buffer.alloc(16);
    const types: string[] = [];
    for (let at = 0; at + 8 <= size; ) {
      await file.read(header, 0, 16, at);
      const short = header.readUInt32BE(0);
      types.push(header.toString("latin1", 4, 8));
      // 1: a 64-bit size follows the type; 0: the box runs to the end of the file.
      const length = short === 1 ? Number(header.readBigUInt64BE(8)) : short === 0 ? size - at : short;
      if (length < 8) throw new Error(`${path}: a box of ${length} bytes at ${at}`);
      at += length;
    }
    return types;
  } finally {
    await file.close();
  }
}
