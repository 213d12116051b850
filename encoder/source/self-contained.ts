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
 * What makes those demuxers claim a file. FFmpeg's DASH and IMF probes look anywhere in the
 * probe buffer and ignore case, so the sniff does too, for every format. It sees only the head:
 * the probed format name is the check that cannot be padded past.
 */
const REFERENCING_TEXT = [/#EXTM3U/i, /ffconcat version/i, /<MPD/i, /<CompositionPlaylist/i, /^c=IN IP/im, /# VobSub index file/i];
const SNIFF_BYTES = 4096;

/** Refuses a downloaded file whose head reads as a playlist or manifest, before FFmpeg opens it. */
export async function assertSelfContained(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0);
    const head = buffer.subarray(0, bytesRead).toString("latin1");
    if (REFERENCING_TEXT.some((re) => re.test(head))) throw JobFailure.playlistSource();
  } finally {
    await handle.close();
  }
}

/** Refuses a source ffprobe read as a referencing format (`format_name` lists aliases: "mov,mp4,…"). */
export function assertSelfContainedFormat(formatName: string | undefined): void {
  if ((formatName ?? "").split(",").some((name) => REFERENCING_DEMUXERS.has(name.trim()))) throw JobFailure.playlistSource();
}
