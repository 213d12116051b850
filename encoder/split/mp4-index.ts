import { open } from "node:fs/promises";
import { createFile, MP4BoxBuffer, type Movie } from "mp4box";
import type { FrameRate } from "../../domain/split";

/** A video packet as the planner reads it: its presentation time in the track's time base, and whether a decode can start there. */
export interface IndexedPacket {
  pts: number;
  key: boolean;
}

/** How much is read at a time: the boxes before the index are small, and the media's box is skipped, not read. */
const CHUNK_BYTES = 256 * 1024;

/**
 * The video packets of an MP4 (or MOV) file, in decode order, from its index alone (the `moov`
 * box, wherever it sits): no media is read, so planning a long source costs its index's size,
 * not the source's. The times are the ones FFmpeg's demuxer gives (what `ffprobe -show_packets`
 * prints): each sample's composition time less the first one shown at or after the edit list's
 * start, and a sample before that start left out, as FFmpeg discards it. Null for what this reader
 * does not follow as FFmpeg does (a fragmented file, several edits or an empty one, a rate other
 * than 1, negative composition offsets, another time base than `timeBase`): the caller reads the
 * packets with ffprobe then.
 */
export async function mp4VideoPackets(
  path: string,
  streamIndex: number,
  timeBase: FrameRate,
): Promise<{ packets: IndexedPacket[]; bytesRead: number } | null> {
  const handle = await open(path);
  try {
    const size = (await handle.stat()).size;
    const head = Buffer.alloc(8);
    await handle.read(head, 0, 8, 0);
    if (head.toString("latin1", 4, 8) !== "ftyp") return null;
    const file = createFile();
    let movie: Movie | undefined;
    file.onReady = (info) => {
      movie = info;
    };
    file.onError = () => undefined;
    let position = 0;
    let bytesRead = 0;
    while (!movie && position < size) {
      const length = Math.min(CHUNK_BYTES, size - position);
      const chunk = Buffer.alloc(length);
      await handle.read(chunk, 0, length, position);
      bytesRead += length;
      const next = file.appendBuffer(MP4BoxBuffer.fromArrayBuffer(chunk.buffer, position));
      // The parser names the next byte it needs: past a media box it has only the header of.
      position = next > position ? next : position + length;
    }
    if (!movie || movie.isFragmented) return null;
    const track = movie.tracks[streamIndex];
    if (!track || !movie.videoTracks.includes(track) || timeBase.num !== 1 || timeBase.den !== track.timescale)
      return null;
    const edits = file.getTrackById(track.id)?.edts?.elst?.entries ?? [];
    if (edits.length > 1) return null;
    const edit = edits[0];
    if (edit && (edit.media_time < 0 || edit.media_rate_integer !== 1 || edit.media_rate_fraction !== 0)) return null;
    const samples = file.getTrackSamplesInfo(track.id);
    if (samples.some((s) => s.cts < 0)) return null;
    const editStart = edit?.media_time ?? 0;
    let firstShown = Number.POSITIVE_INFINITY;
    for (const s of samples) if (s.cts >= editStart && s.cts < firstShown) firstShown = s.cts;
    const shift = Number.isFinite(firstShown) && edit ? firstShown : 0;
    const packets = samples.filter((s) => s.cts >= editStart).map((s) => ({ pts: s.cts - shift, key: s.is_sync }));
    return { packets, bytesRead };
  } finally {
    await handle.close();
  }
}
