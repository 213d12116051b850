import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { parseM3u8 } from "./outputs.ts";

const run = promisify(execFile);

interface Packet {
  pts_time?: string;
  flags: string;
}

/** The first video stream's packets, in the order they are stored (decoding order). */
async function videoPackets(path: string, firstOnly = false): Promise<Packet[]> {
  const { stdout } = await run(
    "ffprobe",
    [
      "-v",
      "error",
      ...(path.endsWith(".m3u8") ? ["-allowed_extensions", "ALL"] : []),
      "-select_streams",
      "v:0",
      ...(firstOnly ? ["-read_intervals", "%+#1"] : []),
      "-show_entries",
      "packet=pts_time,flags",
      "-of",
      "json",
      path,
    ],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  return (JSON.parse(stdout) as { packets?: Packet[] }).packets ?? [];
}

/**
 * The key frames of `path`'s first video stream (a file or an HLS playlist): each one's number
 * (0-based, in presentation order) and presentation time in seconds. From the packets' flags, so
 * nothing is decoded.
 */
export async function keyframesOf(path: string): Promise<{ frame: number; time: number }[]> {
  const packets = (await videoPackets(path))
    .filter((p) => p.pts_time !== undefined)
    .map((p) => ({ time: Number(p.pts_time), key: p.flags.includes("K") }))
    .sort((a, b) => a.time - b.time);
  return packets.flatMap((p, frame) => (p.key ? [{ frame, time: p.time }] : []));
}

/** How far a file's video is stored out of the order it is shown in (reorderingOf). */
export interface Reordering {
  /** The most frames stored after a frame yet shown before it: a decoder's reorder depth. */
  deepest: number;
  /** Whether a keyframe other than the first is stored before frames shown before it (an open GOP's leading frames). */
  behindLaterKeyframe: boolean;
}

/** `path`'s first video stream's reordering, read off its packets in the order they are stored (nothing decoded). */
export async function reorderingOf(path: string): Promise<Reordering> {
  const stored = (await videoPackets(path)).map((p) => ({ time: Number(p.pts_time), key: p.flags.includes("K") }));
  const shownBefore = stored.map((p, i) => stored.slice(i + 1).filter((later) => later.time < p.time).length);
  return {
    deepest: Math.max(0, ...shownBefore),
    behindLaterKeyframe: stored.some((p, i) => p.key && i > 0 && shownBefore[i] > 0),
  };
}

/**
 * The segments of an HLS playlist (a media playlist, or a master and each of its variants) whose
 * first video frame is not a key frame, as "<playlist>: <segment>", so a player that starts or
 * switches there can decode it. Empty when every segment starts on one. An fMP4 segment is
 * probed behind its init segment (EXT-X-MAP); segments without video (an audio rendition's) pass.
 */
export async function segmentsOffKeyframes(playlist: string): Promise<string[]> {
  const manifest = parseM3u8(await readFile(playlist, "utf8"));
  if (manifest.playlists?.length) {
    const nested = await Promise.all(
      manifest.playlists.map((variant) => segmentsOffKeyframes(join(dirname(playlist), variant.uri))),
    );
    return nested.flat();
  }
  const dir = await mkdtemp(join(tmpdir(), "segment-"));
  try {
    const firstKey = await Promise.all(
      manifest.segments.map(async (segment, i) => {
        let path = join(dirname(playlist), segment.uri);
        if (segment.map) {
          path = join(dir, `${i}.mp4`);
          const [init, media] = await Promise.all([
            readFile(join(dirname(playlist), segment.map.uri)),
            readFile(join(dirname(playlist), segment.uri)),
          ]);
          await writeFile(path, Buffer.concat([init, media]));
        }
        const [first] = await videoPackets(path, true);
        return !first || first.flags.includes("K");
      }),
    );
    return manifest.segments.flatMap((segment, i) => (firstKey[i] ? [] : [`${playlist}: ${segment.uri}`]));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
