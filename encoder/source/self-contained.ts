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

/**
 * Refuses a downloaded file whose head reads as a playlist or manifest, before ffprobe or FFmpeg
 * opens it: ffprobe, once it has identified a manifest, has already opened the files it names.
 */
export async function assertSelfContained(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0);
    const head = buffer.subarray(0, bytesRead);
    const nul = head.indexOf(0);
    const text = head.subarray(0, nul === -1 ? head.length : nul).toString("latin1");
    if (REFERENCING_TEXT.some((re) => re.test(text)) || REFERENCING_LINE.test(head.toString("latin1")))
      throw JobFailure.playlistSource();
  } finally {
    await handle.close();
  }
}

/** Refuses a source ffprobe read as a referencing format (`format_name` lists aliases: "mov,mp4,…"). */
export function assertSelfContainedFormat(formatName: string | undefined): void {
  if ((formatName ?? "").split(",").some((name) => REFERENCING_DEMUXERS.has(name.trim())))
    throw JobFailure.playlistSource();
}
