/**
 * Stores a stream's segments as FFmpeg closes them, and reports them to the Worker
 * (docs/playback.md#how-a-stream-is-made). FFmpeg's HLS muxer lists a segment in its own media
 * playlist only once the segment is whole, so that playlist is the signal: each scan reads every
 * rendition's, stores what it lists that is not stored yet (a rendition's init segment first),
 * and reports the batch. Segment 0 of each rendition carries its codecs, and for fMP4 its start.
 */
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { INIT_SEGMENT, MEDIA_PLAYLIST, type StreamLayout } from "../../domain/stream/layout";
import { codecsOfInit, codecsOfTs, timescaleOfInit } from "./codecs";
import { firstSampleTimes, shiftDecodeTimes } from "./fmp4-time";

export interface PublishedSegment {
  rendition: string;
  index: number;
  duration: number;
  start?: number;
  codecs?: string;
}

export interface PublisherOptions {
  /** FFmpeg's output dir: a folder per rendition. */
  dir: string;
  renditions: readonly { name: string; kind: "video" | "audio" }[];
  segmentType: StreamLayout["segmentType"];
  /** Where the stream's objects go: the job's stream prefix. */
  keyPrefix: string;
  /** Segments numbered from here are this run's (a part's first segment); its init segments are stored when it is 0. */
  startNumber: number;
  /** Segments a former attempt had listed, by rendition: kept as they were, not stored again. */
  listed?: Readonly<Record<string, number>>;
  store(key: string, path: string, contentType: string): Promise<void>;
  report(segments: PublishedSegment[]): Promise<void>;
  /**
   * Where each rendition's first sample of this run is meant to be presented on the stream's
   * clock, in seconds: fMP4 segments are moved there (FFmpeg starts each run's decode times at 0).
   */
  firstPresentation?: Readonly<Record<string, number>>;
  /** Deletes each segment's file once stored (a part, whose files no ZIP needs). */
  dropStored?: boolean;
  /** How often FFmpeg's playlists are read. */
  intervalMs?: number;
}

const SCAN_MS = 200;
/** Segments per report: a report stays well inside the Worker's internal body limit. */
const PER_REPORT = 200;

/** The segments a media playlist of FFmpeg's lists, in order: file name and length. */
export function listedSegments(playlist: string): { file: string; duration: number }[] {
  const listed: { file: string; duration: number }[] = [];
  let duration: number | undefined;
  for (const line of playlist.split(/\r?\n/)) {
    const extinf = /^#EXTINF:([\d.]+)/.exec(line);
    if (extinf) duration = Number(extinf[1]);
    else if (line && !line.startsWith("#") && duration !== undefined) {
      listed.push({ file: line.trim(), duration });
      duration = undefined;
    }
  }
  return listed;
}

const SEGMENT_FILE = /^seg_(\d+)\.(ts|m4s)$/;

/** The init segment FFmpeg wrote in a rendition's folder (it numbers it after the stream: init_0.mp4). */
async function initFile(folder: string): Promise<string | undefined> {
  const files = await readdir(folder).catch(() => [] as string[]);
  const init = files.find((f) => /^init(_\d+)?\.mp4$/.test(f));
  return init && join(folder, init);
}

export interface Publisher {
  /** Stores and reports everything FFmpeg has closed so far; the last call after FFmpeg exits takes the rest. */
  flush(): Promise<void>;
  stop(): void;
  /** Every key this run stored, for a job that ended meanwhile to take back. */
  stored(): string[];
  /** Each rendition's segments as reported (or found listed), in order. */
  segments(): Map<string, PublishedSegment[]>;
  /** Each rendition's init segment file, once seen. */
  inits(): Map<string, string>;
}

/**
 * Starts scanning; `onError` is told of the first failure (a store, a report), after which the
 * publisher stops: the caller stops FFmpeg.
 */
export function publishStream(options: PublisherOptions, onError: (err: unknown) => void): Publisher {
  const stored: string[] = [];
  const done = new Map<string, Map<number, PublishedSegment>>(options.renditions.map((r) => [r.name, new Map()]));
  const inits = new Map<string, string>();
  /** Each rendition's move of this run's decode times, in its timescale's units, once its first segment is seen. */
  const shifts = new Map<string, number>();
  const contentType = (kind: "video" | "audio", file: string) =>
    file.endsWith(".ts") ? "video/mp2t" : kind === "audio" ? "audio/mp4" : "video/mp4";
  let failure: { err: unknown } | undefined;
  let running: Promise<void> = Promise.resolve();

  async function storeInit(rendition: { name: string; kind: "video" | "audio" }) {
    if (options.segmentType !== "fmp4" || inits.has(rendition.name)) return inits.get(rendition.name);
    const path = await initFile(join(options.dir, rendition.name));
    if (!path) return undefined;
    if (options.startNumber === 0) {
      const key = `${options.keyPrefix}${rendition.name}/${INIT_SEGMENT}`;
      stored.push(key);
      await options.store(key, path, contentType(rendition.kind, INIT_SEGMENT));
    }
    inits.set(rendition.name, path);
    return path;
  }

  /**
   * An fMP4 segment moved onto the stream's clock, in place: its run's first segment sets the
   * move (where its first sample is meant to be, less where FFmpeg put it).
   */
  async function placeOnClock(rendition: string, path: string, init: string | undefined) {
    const meant = options.firstPresentation?.[rendition];
    if (options.segmentType !== "fmp4" || meant === undefined || !init) return;
    const bytes = await readFile(path);
    let shift = shifts.get(rendition);
    if (shift === undefined) {
      const timescale = timescaleOfInit(await readFile(init));
      const first = firstSampleTimes(bytes);
      if (!timescale || !first) throw new Error(`${rendition}'s first segment has no decode time to place`);
      shift = Math.round(meant * timescale) - (first.decode + first.composition);
      shifts.set(rendition, shift);
    }
    shiftDecodeTimes(bytes, shift);
    await writeFile(path, bytes);
  }

  /** What segment 0 tells of its rendition: its codecs, and for fMP4 its start. */
  async function firstFacts(kind: "video" | "audio", segment: string, init: string | undefined) {
    if (options.segmentType === "mpegts") return { codecs: codecsOfTs(await readFile(segment), kind) };
    if (!init) return {};
    const head = await readFile(init);
    const timescale = timescaleOfInit(head);
    const first = firstSampleTimes(await readFile(segment));
    const start = timescale && first ? (first.decode + first.composition) / timescale : undefined;
    return { codecs: codecsOfInit(head), ...(start !== undefined && { start }) };
  }

  async function scan() {
    const batch: PublishedSegment[] = [];
    for (const rendition of options.renditions) {
      const folder = join(options.dir, rendition.name);
      const playlist = await readFile(join(folder, MEDIA_PLAYLIST), "utf8").catch(() => "");
      const mine = done.get(rendition.name) ?? new Map();
      for (const { file, duration } of listedSegments(playlist)) {
        const index = Number(SEGMENT_FILE.exec(file)?.[1] ?? Number.NaN);
        if (!Number.isInteger(index) || mine.has(index)) continue;
        const init = await storeInit(rendition);
        const path = join(folder, file);
        await placeOnClock(rendition.name, path, init);
        const segment: PublishedSegment = { rendition: rendition.name, index, duration };
        if (index === 0) Object.assign(segment, await firstFacts(rendition.kind, path, init));
        if (index >= (options.listed?.[rendition.name] ?? 0)) {
          const key = `${options.keyPrefix}${rendition.name}/${file}`;
          stored.push(key);
          await options.store(key, path, contentType(rendition.kind, file));
        }
        if (options.dropStored) await rm(path, { force: true });
        mine.set(index, segment);
        batch.push(segment);
      }
    }
    for (let i = 0; i < batch.length; i += PER_REPORT) await options.report(batch.slice(i, i + PER_REPORT));
  }

  /** One scan at a time, each after the last: a flush waits for the scan before it and runs its own. */
  const next = () => {
    running = running
      .then(() => (failure ? undefined : scan()))
      .catch((err: unknown) => {
        if (failure) return;
        failure = { err };
        onError(err);
      });
    return running;
  };
  let scanning = false;
  const timer = setInterval(() => {
    if (scanning) return;
    scanning = true;
    next().finally(() => (scanning = false));
  }, options.intervalMs ?? SCAN_MS);

  return {
    flush: async () => {
      await next();
      if (failure) throw failure.err;
    },
    stop: () => clearInterval(timer),
    stored: () => [...stored],
    segments: () =>
      new Map([...done].map(([name, byIndex]) => [name, [...byIndex.values()].sort((a, b) => a.index - b.index)])),
    inits: () => new Map(inits),
  };
}
