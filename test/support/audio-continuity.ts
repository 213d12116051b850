import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The rate every output is decoded at, so a time is a sample index over one known number. */
const RATE = 48_000;
/**
 * The tone starts and stops abruptly at the ends of the audio, and an encoder pads its last frame
 * with silence (FFmpeg 5.1 decodes AAC's padding), so jumps within this much of either end, and
 * silence there shorter than this, are the tone's edges, not a fault: an AAC frame and a bit.
 */
const EDGE_SECONDS = 0.03;
/** Jumps closer than this are one fault smeared over a few samples by the codec. */
const MERGE_SECONDS = 0.01;
/** A run of near-silence this long is a gap: a sine passes near zero for a few samples only (about 0.1 ms at 440 Hz). */
const GAP_SECONDS = 0.002;

export type Discontinuity =
  /** The wave jumps by more than the tone can between two samples (a splice, a click), at `at` seconds. */
  | { kind: "jump"; at: number; size: number }
  /** The tone stops for `seconds` from `at`. */
  | { kind: "gap"; at: number; seconds: number };

async function firstAudioStart(path: string): Promise<number> {
  const { stdout } = await run("ffprobe", [
    "-v",
    "error",
    ...playlistInput(path),
    "-select_streams",
    "a:0",
    "-show_entries",
    "stream=start_time",
    "-of",
    "csv=p=0",
    path,
  ]);
  const start = Number(stdout.trim().split("\n")[0]);
  return Number.isFinite(start) ? start : 0;
}

/** FFmpeg's HLS demuxer reads only segments with the extensions it expects unless told otherwise (fMP4's .m4s). */
function playlistInput(path: string): string[] {
  return path.endsWith(".m3u8") ? ["-allowed_extensions", "ALL"] : [];
}

/** The first audio stream of `path` (a file or an HLS playlist) decoded to mono at RATE, through `filters`. */
async function decodedMono(path: string, filters: string[] = []): Promise<Float32Array> {
  const { stdout } = await run(
    "ffmpeg",
    [
      "-v",
      "error",
      ...playlistInput(path),
      "-i",
      path,
      "-map",
      "0:a:0",
      ...filters,
      "-ac",
      "1",
      "-ar",
      String(RATE),
      "-f",
      "f32le",
      "-",
    ],
    { encoding: "buffer", maxBuffer: 1024 * 1024 * 1024 },
  );
  return new Float32Array(stdout.buffer, stdout.byteOffset, Math.floor(stdout.length / 4));
}

/**
 * Where the first audio stream of `path` (a file or an HLS playlist) stops being one continuous
 * sine tone of `toneHz`, as makeNumberedSource (frame-numbers.ts) makes it: jumps from one sample
 * to the next beyond the steepest step the tone takes, and runs of silence. Times are the stream's
 * presentation times in seconds. Empty when the tone runs unbroken.
 */
export async function audioDiscontinuities(path: string, opts: { toneHz: number }): Promise<Discontinuity[]> {
  const [start, samples] = await Promise.all([firstAudioStart(path), decodedMono(path)]);
  let squares = 0;
  for (const s of samples) squares += s * s;
  // The tone's amplitude from its power: a few gaps or clicks barely move it.
  const amplitude = Math.SQRT2 * Math.sqrt(squares / samples.length);
  // The steepest step of A·sin(2πft) between samples 1/RATE apart, doubled for the codec's noise
  // (AAC at 128k stays within 1.1 times it on a clean tone).
  const maxStep = 2 * amplitude * 2 * Math.sin((Math.PI * opts.toneHz) / RATE);
  const quiet = amplitude / 8;
  const edge = Math.round(EDGE_SECONDS * RATE);
  const found: Discontinuity[] = [];
  let lastJump: { kind: "jump"; at: number; size: number } | undefined;
  let quietFrom = -1;
  for (let i = 0; i <= samples.length; i++) {
    const silent = i < samples.length && Math.abs(samples[i]) < quiet;
    if (silent && quietFrom < 0) quietFrom = i;
    if (!silent && quietFrom >= 0) {
      // Silence that touches an end is the encoder's padding while it is shorter than an edge.
      const atEnd = quietFrom === 0 || i === samples.length;
      if (i - quietFrom >= (atEnd ? edge : GAP_SECONDS * RATE))
        found.push({ kind: "gap", at: start + quietFrom / RATE, seconds: (i - quietFrom) / RATE });
      quietFrom = -1;
    }
    if (i < edge || i >= samples.length - edge) continue;
    const size = Math.abs(samples[i] - samples[i - 1]);
    if (size <= maxStep) continue;
    const at = start + i / RATE;
    if (lastJump && at - lastJump.at < MERGE_SECONDS) lastJump.size = Math.max(lastJump.size, size);
    else {
      lastJump = { kind: "jump", at, size };
      found.push(lastJump);
    }
  }
  return found.sort((a, b) => a.at - b.at);
}

const isAudioOrVideo = (type: string | undefined): type is "audio" | "video" => type === "audio" || type === "video";

/** Packet times of an output's audio and video (`readIntervals`: ffprobe's, to read only the start). */
async function avPackets(
  path: string,
  readIntervals?: string,
): Promise<{ type: "audio" | "video"; pts: number; duration: number }[]> {
  const { stdout } = await run(
    "ffprobe",
    [
      "-v",
      "error",
      ...playlistInput(path),
      "-show_entries",
      "packet=stream_index,pts_time,duration_time:stream=index,codec_type",
      ...(readIntervals ? ["-read_intervals", readIntervals] : []),
      "-of",
      "json",
      path,
    ],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  const probe = JSON.parse(stdout) as {
    streams: { index: number; codec_type: string }[];
    packets: { stream_index: number; pts_time?: string; duration_time?: string }[];
  };
  const typeOf = new Map(probe.streams.map((s) => [s.index, s.codec_type]));
  const packets = probe.packets.flatMap((p) => {
    const type = typeOf.get(p.stream_index);
    if (!isAudioOrVideo(type) || p.pts_time === undefined) return [];
    return [{ type, pts: Number(p.pts_time), duration: Number(p.duration_time ?? 0) }];
  });
  if (!packets.some((p) => p.type === "audio") || !packets.some((p) => p.type === "video"))
    throw new Error(`${path} lacks audio or video packets`);
  return packets;
}

/**
 * Seconds by which the audio ends after the video (negative: before), each end being its last
 * packet's time plus duration, as a player would reach it. `path` is a file or an HLS playlist.
 */
export async function audioEndVsVideoEnd(path: string): Promise<number> {
  const end = { audio: Number.NEGATIVE_INFINITY, video: Number.NEGATIVE_INFINITY };
  for (const p of await avPackets(path)) end[p.type] = Math.max(end[p.type], p.pts + p.duration);
  return end.audio - end.video;
}

/**
 * Seconds by which the audio starts after the video (negative: before), each start being its
 * first packet's time as the container gives it (an AAC encoder's priming included, as a player
 * reads it from the edit list). `path` is a file or an HLS playlist.
 */
export async function audioStartVsVideoStart(path: string): Promise<number> {
  const start = { audio: Number.POSITIVE_INFINITY, video: Number.POSITIVE_INFINITY };
  for (const p of await avPackets(path, "%+5")) start[p.type] = Math.min(start[p.type], p.pts);
  return start.audio - start.video;
}

/**
 * When the first audio sample louder than half full scale plays, in seconds from the file's time
 * 0, with the stream's gaps kept as the player keeps them: decoded through `aresample=async=1`,
 * which fills a gap in the timestamps with silence, and padded from time 0.
 */
export async function firstLoudSampleAt(path: string): Promise<number> {
  const samples = await decodedMono(path, ["-af", "aresample=async=1:first_pts=0"]);
  const at = samples.findIndex((s) => Math.abs(s) > 0.5);
  if (at < 0) throw new Error(`${path}: no sample louder than half full scale`);
  return at / RATE;
}
