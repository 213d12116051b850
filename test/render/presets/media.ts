import { execFile } from "node:child_process";
import { mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { encodePreset } from "../../../encoder/ffmpeg/encode";
import { probeFile, probeSource, type ProbeSummary } from "../../../encoder/ffmpeg/probe";
import { collectOutput, type JobOutput } from "../../../encoder/ffmpeg/outputs";
import { encodeWholeStream, layoutFor } from "../../../encoder/stream/whole";
import { streamRecipe } from "../../../domain/stream/layout";
import { zipStream } from "../../../encoder/upload/zip";
import { readZip } from "../../support/outputs";
import { cachedMedia } from "../../support/media-cache";

const exec = promisify(execFile);

const FPS = 30;
/** Every source's length but avLong's: each preset encodes it once, the slow codecs (x265, VP9, AV1) at 1080p included. */
export const SECONDS = 2;
/** avLong's length: two 2 s segments per rung, so a live ladder's rungs can be seen cut at the same instants. */
export const LONG_SECONDS = 4;
export const FRAME = 1 / FPS;

/** Runs a generator command; fixtures are made at test time, none are committed. */
async function ffmpeg(args: string[]) {
  await exec("ffmpeg", ["-hide_banner", "-nostdin", "-loglevel", "error", "-y", ...args]);
}

// Speech-like audio: two tones whose level swells and fades (so the loudness range is not 0,
// which would keep loudnorm out of linear mode) over a little noise for the denoiser.
const audioSources = (seconds: number) => [
  "-f",
  "lavfi",
  "-i",
  `sine=frequency=220:sample_rate=48000:duration=${seconds}`,
  "-f",
  "lavfi",
  "-i",
  `sine=frequency=330:sample_rate=48000:duration=${seconds}`,
  "-f",
  "lavfi",
  "-i",
  `anoisesrc=color=pink:amplitude=0.02:sample_rate=48000:duration=${seconds}`,
];
const AUDIO_GRAPH =
  "[1:a][2:a]join=inputs=2:channel_layout=stereo,volume='0.15+0.6*abs(sin(PI*t/1.5))':eval=frame[tones];" +
  "[3:a]aformat=channel_layouts=stereo[noise];[tones][noise]amix=inputs=2:normalize=0[a]";
const videoSource = (seconds: number) => [
  "-f",
  "lavfi",
  "-i",
  `testsrc2=size=1280x720:rate=${FPS}:duration=${seconds}`,
];
const VIDEO_SOURCE = videoSource(SECONDS);
const FAST_H264 = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"];

export const SUBTITLES = {
  eng: [
    { start: 0.3, end: 0.9, text: "Tom & Jerry <i>run</i>" },
    { start: 1.1, end: 1.8, text: "R&D at 5 < 6" },
  ],
  fra: [{ start: 0.5, end: 1.5, text: "Bonjour & salut" }],
};

const srtTime = (s: number) => `00:00:0${Math.floor(s)},${String(Math.round((s % 1) * 1000)).padStart(3, "0")}`;
const srt = (cues: { start: number; end: number; text: string }[]) =>
  cues.map((c, i) => `${i + 1}\n${srtTime(c.start)} --> ${srtTime(c.end)}\n${c.text}\n`).join("\n");

export interface Sources {
  dir: string;
  /** SECONDS of 1280x720 30 fps H.264 with stereo AAC. */
  av: string;
  /** The same for LONG_SECONDS. */
  avLong: string;
  /** The same picture, no audio. */
  videoOnly: string;
  /** The same picture and sound in MKV, with two SubRip tracks (eng, fra). */
  subtitled: string;
  cleanup(): Promise<void>;
}

/**
 * The sources, each made once for every file that asks (test/support/media-cache.ts) and read
 * from there; the encodes go to a directory of the caller's own.
 */
export async function makeSources(): Promise<Sources> {
  const dir = await mkdtemp(join(tmpdir(), "presets-render-"));
  const withAudio = (seconds: number) => {
    const args = [
      ...videoSource(seconds),
      ...audioSources(seconds),
      "-filter_complex",
      AUDIO_GRAPH,
      "-map",
      "0:v",
      "-map",
      "[a]",
      ...FAST_H264,
      "-c:a",
      "aac",
      "-b:a",
      "192k",
    ];
    return cachedMedia({ presetSource: args }, ".mp4", (path) => ffmpeg([...args, path]));
  };
  const videoOnlyArgs = [...VIDEO_SOURCE, ...FAST_H264];
  const subtitles = { eng: srt(SUBTITLES.eng), fra: srt(SUBTITLES.fra) };
  // Encoded straight into MKV with the SubRip files (not remuxed from MP4, which shifts timings).
  const subtitledArgs = (eng: string, fra: string) => [
    ...VIDEO_SOURCE,
    ...audioSources(SECONDS),
    "-i",
    eng,
    "-i",
    fra,
    "-filter_complex",
    AUDIO_GRAPH,
    "-map",
    "0:v",
    "-map",
    "[a]",
    "-map",
    "4:s",
    "-map",
    "5:s",
    ...FAST_H264,
    "-c:a",
    "aac",
    "-c:s",
    "srt",
    "-metadata:s:s:0",
    "language=eng",
    "-metadata:s:s:1",
    "language=fra",
  ];
  const [av, avLong, videoOnly, subtitled] = await Promise.all([
    withAudio(SECONDS),
    withAudio(LONG_SECONDS),
    cachedMedia({ presetSource: videoOnlyArgs }, ".mp4", (path) => ffmpeg([...videoOnlyArgs, path])),
    cachedMedia({ presetSource: subtitledArgs("eng.srt", "fra.srt"), srt: subtitles }, ".mkv", async (path) => {
      const [eng, fra] = [join(dir, "eng.srt"), join(dir, "fra.srt")];
      await writeFile(eng, subtitles.eng);
      await writeFile(fra, subtitles.fra);
      await ffmpeg([...subtitledArgs(eng, fra), path]);
    }),
  ]);
  return { dir, av, avLong, videoOnly, subtitled, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

let runCount = 0;
/** Probes the source and encodes it with the preset into a fresh out dir, as the encoder does. */
export async function render(
  sources: Sources,
  presetId: string,
  input = sources.av,
): Promise<{ output: JobOutput; probe: ProbeSummary; outDir: string }> {
  const outDir = join(sources.dir, `out-${++runCount}-${presetId}`);
  const ladder = streamRecipe(presetId);
  if (ladder) {
    // A ladder is a stream (encoder/stream/whole.ts): published to nowhere here, packaged as its ZIP.
    const probed = await probeSource(input);
    const layout = layoutFor(ladder, probed);
    if (!layout) throw new Error(`${input} has no video`);
    await encodeWholeStream({
      presetId,
      recipe: ladder,
      source: { input: { path: input }, probed },
      layout,
      outDir,
      publish: { keyPrefix: "", store: async () => undefined, report: async () => undefined },
      run: { workDir: sources.dir },
      // Nothing to stop early for: the last flush rethrows a failure to publish.
      onPublishError: () => undefined,
    });
    return { output: await collectOutput(presetId, outDir, { kind: "zip" }), probe: probed.probe, outDir };
  }
  const probe = await probeFile(input);
  const output = await encodePreset({ presetId, input, outDir, probe, workDir: sources.dir });
  return { output, probe, outDir };
}

type Rendered = Awaited<ReturnType<typeof render>>;
const renders = new WeakMap<Sources, Map<string, Promise<Rendered>>>();
/** `render`, once for each preset and input of these sources: every test that reads an encode shares it. */
export function rendered(sources: Sources, presetId: string, input = sources.av): Promise<Rendered> {
  const mine = renders.get(sources) ?? new Map<string, Promise<Rendered>>();
  renders.set(sources, mine);
  const key = `${presetId} ${input}`;
  const made = mine.get(key) ?? render(sources, presetId, input);
  mine.set(key, made);
  return made;
}

/** A multi-file output as the encoder delivers it (encoder/jobs/pipeline.ts): its files in one ZIP, read back by member. */
export async function asDelivered(outDir: string, files: string[]): Promise<Map<string, Buffer>> {
  const chunks: Buffer[] = [];
  for await (const chunk of zipStream(outDir, files)) chunks.push(chunk as Buffer);
  return readZip(Buffer.concat(chunks));
}

export interface ProbedStream {
  codec_type: string;
  codec_name: string;
  codec_tag_string: string;
  width?: number;
  height?: number;
  sample_rate?: string;
  channels?: number;
  duration?: string;
  nb_frames?: string;
}

export async function ffprobe(
  path: string,
): Promise<{ streams: ProbedStream[]; format: { duration: string; format_name: string } }> {
  const { stdout } = await exec("ffprobe", [
    "-v",
    "error",
    "-print_format",
    "json",
    "-show_format",
    "-show_streams",
    path,
  ]);
  return JSON.parse(stdout);
}

export async function streamOf(path: string, type: "video" | "audio"): Promise<ProbedStream> {
  const stream = (await ffprobe(path)).streams.find((s) => s.codec_type === type);
  if (!stream) throw new Error(`no ${type} stream in ${path}`);
  return stream;
}

/** Integrated loudness in LUFS, measured by the ebur128 filter. */
export async function integratedLoudness(path: string): Promise<number> {
  const { stderr } = await exec("ffmpeg", [
    "-hide_banner",
    "-nostats",
    "-i",
    path,
    "-map",
    "0:a:0",
    "-af",
    "ebur128",
    "-f",
    "null",
    "-",
  ]);
  const summary = stderr.slice(stderr.lastIndexOf("Summary:"));
  return Number(/I:\s+(-?[\d.]+) LUFS/.exec(summary)?.[1]);
}

/** Top-level MP4 box types in file order. */
export async function topLevelBoxes(path: string): Promise<string[]> {
  const file = await open(path, "r");
  try {
    const { size } = await file.stat();
    const boxes: string[] = [];
    const header = Buffer.alloc(16);
    for (let offset = 0; offset < size; ) {
      await file.read(header, 0, 16, offset);
      let boxSize = header.readUInt32BE(0);
      if (boxSize === 1) boxSize = Number(header.readBigUInt64BE(8));
      if (boxSize === 0) boxSize = size - offset;
      boxes.push(header.toString("latin1", 4, 8));
      offset += boxSize;
    }
    return boxes;
  } finally {
    await file.close();
  }
}

export const readText = (path: string) => readFile(path, "utf8");

/** WebVTT cues: start/end in seconds and the payload lines. */
export function parseVtt(text: string): { start: number; end: number; text: string }[] {
  const seconds = (t: string) => t.split(":").reduce((acc, part) => acc * 60 + Number(part), 0);
  return text
    .split(/\n\n+/)
    .filter((block) => block.includes("-->"))
    .map((block) => {
      const [timing, ...payload] = block.trim().split("\n");
      const [start, end] = timing.split(" --> ").map((t) => seconds(t.trim().split(" ")[0]));
      return { start, end, text: payload.join("\n") };
    });
}
