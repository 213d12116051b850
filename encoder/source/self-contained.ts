import { open } from "node:fs/promises";
import { JobFailure } from "../failure";

/**
 * FFmpeg 5.1 demuxers that open further files or URLs named inside their input: HLS and DASH
 * manifests, concat lists, IMF composition playlists, SDP session descriptions (RTP streams) and
 * VobSub indexes (their .sub file). A source FFmpeg reads as one of these is refused, so FFmpeg
 * only ever reads the downloaded file itself.
 */
const REFERENCING_DEMUXERS = new Set(["hls", "dash", "concat", "imf", "sdp", "vobsub"]);

/**
 * What makes those demuxers claim a file, as FFmpeg's probes look for it. Each looks at the
 * probe buffer as a C string, so only at the text before its first NUL byte (the HLS, concat
 * and VobSub probes at its start; DASH and IMF anywhere in it, in any case); the sniff does the
 * same, so binary media (an MP4 has a NUL in its first bytes) can never match by chance. The
 * SDP probe reads line by line past NULs inside a line, so its marker is sought everywhere.
 */
const REFERENCING_TEXT = [/#EXTM3U/i, /ffconcat version/i, /<MPD/i, /<CompositionPlaylist/i, /# VobSub index file/i];
const REFERENCING_LINE = /^c=IN IP/im;
/**
 * FFmpeg's format probe reads at most this much of a file (its `formatprobesize`, 1 MiB) before
 * it settles on a format: a manifest padded further is never opened as one.
 */
const SNIFF_BYTES = 1 << 20;
/** ID3v2 tags followed through: FFmpeg's probe skips one; a chain of more is looked behind too. */
const MAX_ID3_TAGS = 16;

/**
 * The length of the ID3v2 tag `head` starts with, header and footer included, or 0: FFmpeg's
 * probe skips such a tag (which holds NUL bytes) before it looks for a format, so a playlist
 * behind one is read as a playlist (libavformat's ff_id3v2_match and ff_id3v2_tag_len).
 */
export function id3v2TagLength(head: Uint8Array): number {
  if (head.length < 10 || head[0] !== 0x49 || head[1] !== 0x44 || head[2] !== 0x33) return 0;
  if (head[3] === 0xff || head[4] === 0xff || (head[6] | head[7] | head[8] | head[9]) & 0x80) return 0;
  const size = (head[6] << 21) | (head[7] << 14) | (head[8] << 7) | head[9];
  return 10 + size + (head[5] & 0x10 ? 10 : 0);
}

/** Whether a probe buffer (the file from where FFmpeg's probe starts) reads as a referencing format. */
function references(head: Buffer): boolean {
  const nul = head.indexOf(0);
  const text = head.subarray(0, nul === -1 ? head.length : nul).toString("latin1");
  return REFERENCING_TEXT.some((re) => re.test(text)) || REFERENCING_LINE.test(head.toString("latin1"));
}

/** Reads up to `length` bytes of a source from `offset` (fewer at its end). */
export type HeadReader = (offset: number, length: number) => Promise<Uint8Array>;

/**
 * Refuses a source whose head reads as a playlist or manifest, before ffprobe or FFmpeg opens it:
 * ffprobe, once it has identified a manifest, has already opened the files it names. The head is
 * read where FFmpeg's probe reads it: at the start, and behind a leading ID3v2 tag.
 */
export async function assertSelfContainedHead(read: HeadReader): Promise<void> {
  let offset = 0;
  for (let tags = 0; tags <= MAX_ID3_TAGS; tags++) {
    const head = Buffer.from(await read(offset, SNIFF_BYTES));
    if (references(head)) throw JobFailure.playlistSource();
    const tag = id3v2TagLength(head);
    if (tag === 0) return;
    offset += tag;
  }
}

/** assertSelfContainedHead on a downloaded file. */
export async function assertSelfContained(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await assertSelfContainedHead(async (offset, length) => {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(length), 0, length, offset);
      return buffer.subarray(0, bytesRead);
    });
  } finally {
    await handle.close();
  }
}

/** Refuses a source ffprobe read as a referencing format (`format_name` lists aliases: "mov,mp4,…"). */
export function assertSelfContainedFormat(formatName: string | undefined): void {
  if ((formatName ?? "").split(",").some((name) => REFERENCING_DEMUXERS.has(name.trim())))
    throw JobFailure.playlistSource();
}
