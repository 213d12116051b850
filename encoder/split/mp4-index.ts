import { open } from "node:fs/promises";
import { createFile, MP4BoxBuffer, type Movie } from "mp4box";
import type { FrameRate } from "../../domain/split";

/** A source's bytes as the index reader reads them: a file on this disk, or a source read by ranges from its origin. */
export interface SourceBytes {
  size: number;
  /** Up to `length` bytes from `offset` (fewer at the end). */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** A file's bytes, read where they are asked for; `close` once done. */
export async function fileBytes(path: string): Promise<SourceBytes & { close(): Promise<void> }> {
  const handle = await open(path);
  const { size } = await handle.stat();
  return {
    size,
    read: async (offset, length) => {
      const buffer = new Uint8Array(Math.max(0, Math.min(length, size - offset)));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      return buffer.subarray(0, bytesRead);
    },
    close: () => handle.close(),
  };
}

/** A video packet as the planner reads it: its presentation time in the track's time base, and whether a decode can start there. */
export interface IndexedPacket {
  pts: number;
  key: boolean;
}

/**
 * The most samples, over all tracks, an index is read here for: mp4box.js keeps an object for
 * each sample (a few hundred bytes of heap), the packet scan's reader 8 bytes a frame, and the
 * encoder's heap is capped (`npm run start:encoder`). A longer source, or a forged count, is read
 * by the packet scan (docs/scaling.md#the-frames-a-plan-counts).
 */
export const MAX_INDEXED_SAMPLES = 400_000;

/** A file type box lists a few brands: anything longer is not one. */
const FTYP_MAX_BYTES = 4096;

/** The boxes whose children lead from `moov` to each track's sample sizes. */
const CONTAINERS = new Set(["moov", "trak", "mdia", "minf", "stbl"]);

/**
 * The samples the index declares over all its tracks (each `stsz` or `stz2` box's count), read
 * before mp4box.js builds an object for each; null when the boxes do not nest within the index.
 */
export function declaredSamples(index: Uint8Array): number | null {
  const view = new DataView(index.buffer, index.byteOffset, index.byteLength);
  let total = 0;
  const walk = (from: number, to: number): boolean => {
    let at = from;
    while (at + 8 <= to) {
      const bytes = view.getUint32(at);
      const type = String.fromCharCode(...index.subarray(at + 4, at + 8));
      if (bytes < 8 || at + bytes > to) return false;
      if (CONTAINERS.has(type) && !walk(at + 8, at + bytes)) return false;
      // A full box: version and flags, then (stsz) the one sample size, then the count.
      if ((type === "stsz" || type === "stz2") && bytes >= 20) total += view.getUint32(at + 16);
      at += bytes;
    }
    return true;
  };
  return walk(0, index.byteLength) ? total : null;
}

/** Where the file's top-level `moov` box sits, read off the boxes' headers alone; null when there is none. */
async function findMoov(source: SourceBytes): Promise<{ offset: number; bytes: number } | null> {
  const { size } = source;
  let offset = 0;
  while (offset + 8 <= size) {
    const header = await source.read(offset, 16);
    if (header.length < 8) return null;
    const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
    const type = String.fromCharCode(...header.subarray(4, 8));
    const small = view.getUint32(0);
    if (small === 1 && header.length < 16) return null;
    const bytes = small === 1 ? Number(view.getBigUint64(8)) : small === 0 ? size - offset : small;
    if (bytes < 8) return null;
    if (type === "moov") return { offset, bytes };
    offset += bytes;
  }
  return null;
}

/**
 * The video packets of an MP4 (or MOV) file, in decode order, from its index alone (the `moov`
 * box, wherever it sits, found by the top-level boxes' headers): no media is read, so planning a
 * source costs its index's size, not the source's, on this disk or by ranges from its origin. The times are the ones FFmpeg's demuxer gives
 * (what `ffprobe -show_packets` prints): each sample's composition time less the first one shown
 * at or after the edit list's start, and a sample before that start left out, as FFmpeg discards
 * it. Null for what this reader
 * does not follow as FFmpeg does (a fragmented file, several edits or an empty one, a rate other
 * than 1, negative composition offsets, another time base than `timeBase`), and for an index of
 * more than MAX_INDEXED_SAMPLES: the caller reads the packets with ffprobe then.
 */
export async function mp4VideoPackets(
  source: SourceBytes,
  streamIndex: number,
  timeBase: FrameRate,
): Promise<{ packets: IndexedPacket[]; indexBytes: number } | null> {
  const head = await source.read(0, 8);
  if (head.length < 8) return null;
  const ftypBytes = new DataView(head.buffer, head.byteOffset, 8).getUint32(0);
  if (String.fromCharCode(...head.subarray(4, 8)) !== "ftyp" || ftypBytes < 8 || ftypBytes > FTYP_MAX_BYTES)
    return null;
  const moov = await findMoov(source);
  // An index of more than 32 bytes a sample is no index this reader needs to hold whole.
  if (!moov || moov.bytes > MAX_INDEXED_SAMPLES * 32) return null;
  // The file type, then the index, parsed as one file: the media between them is not read.
  const [ftyp, index] = await Promise.all([source.read(0, ftypBytes), source.read(moov.offset, moov.bytes)]);
  if (ftyp.length < ftypBytes || index.length < moov.bytes) return null;
  const boxes = new Uint8Array(ftypBytes + moov.bytes);
  boxes.set(ftyp, 0);
  boxes.set(index, ftypBytes);
  const samples = declaredSamples(boxes.subarray(ftypBytes));
  if (samples === null || samples > MAX_INDEXED_SAMPLES) return null;
  const file = createFile();
  let movie: Movie | undefined;
  file.onReady = (info) => {
    movie = info;
  };
  file.onError = () => undefined;
  file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(boxes.buffer, 0), true);
  if (!movie || movie.isFragmented) return null;
  const track = movie.tracks[streamIndex];
  if (!track || !movie.videoTracks.includes(track) || timeBase.num !== 1 || timeBase.den !== track.timescale)
    return null;
  const edits = file.getTrackById(track.id)?.edts?.elst?.entries ?? [];
  if (edits.length > 1) return null;
  const edit = edits[0];
  if (edit && (edit.media_time < 0 || edit.media_rate_integer !== 1 || edit.media_rate_fraction !== 0)) return null;
  const video = file.getTrackSamplesInfo(track.id);
  if (video.some((s) => s.cts < 0)) return null;
  const editStart = edit?.media_time ?? 0;
  let firstShown = Number.POSITIVE_INFINITY;
  for (const s of video) if (s.cts >= editStart && s.cts < firstShown) firstShown = s.cts;
  const shift = Number.isFinite(firstShown) && edit ? firstShown : 0;
  const packets = video.filter((s) => s.cts >= editStart).map((s) => ({ pts: s.cts - shift, key: s.is_sync }));
  return { packets, indexBytes: moov.bytes };
}
