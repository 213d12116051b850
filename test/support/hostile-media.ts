import { rm, writeFile } from "node:fs/promises";
import { deflateSync } from "node:zlib";
import { ffmpeg } from "./media";

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/**
 * A valid PNG of `width`x`height` black pixels, 1 bit each: a decompression bomb. 16000x16000
 * is 31 KB on disk, 32 MB as FFmpeg decodes it and 1 GB once converted to RGBA for an overlay.
 * Written by hand (FFmpeg would have to hold the whole picture to make it).
 */
export function bombPng(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale; compression, filter and interlace stay 0
  const row = 1 + Math.ceil(width / 8); // a filter byte, then the packed pixels
  const pixels = deflateSync(Buffer.alloc(row * height), { level: 9 });
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", header),
    pngChunk("IDAT", pixels),
    pngChunk("IEND", Buffer.alloc(0)),
  ]);
}

/**
 * A Matroska video whose frames are that PNG (muxed without decoding, `-c copy`): a few KB a
 * frame that claim `size`x`size` pixels each.
 */
export async function hugePictureVideo(
  path: string,
  size: number,
  opts: { seconds: number; fps: number },
): Promise<void> {
  const png = `${path}.png`;
  await writeFile(png, bombPng(size, size));
  await ffmpeg([
    "-framerate",
    String(opts.fps),
    "-loop",
    "1",
    "-i",
    png,
    "-t",
    String(opts.seconds),
    "-c",
    "copy",
    path,
  ]);
  await rm(png);
}

/**
 * A Matroska video of PNG frames whose size changes mid-stream: `first.seconds` of lavfi's test
 * pattern at `first.size`, then `after.seconds` of an `after.size`-square PNG (as bombPng writes
 * it), joined without decoding (`-c copy`). Its stream header, and so the probe, gives the first
 * size; the later frames claim the other.
 */
export async function growingPictureVideo(
  path: string,
  opts: { first: { size: string; seconds: number }; after: { size: number; seconds: number }; fps: number },
): Promise<void> {
  const [head, tail, png, list] = [`${path}.head.mkv`, `${path}.tail.mkv`, `${path}.png`, `${path}.txt`];
  await writeFile(png, bombPng(opts.after.size, opts.after.size));
  await ffmpeg([
    "-f",
    "lavfi",
    "-i",
    `testsrc2=size=${opts.first.size}:rate=${opts.fps}:duration=${opts.first.seconds}`,
    "-c:v",
    "png",
    head,
  ]);
  await ffmpeg([
    "-framerate",
    String(opts.fps),
    "-loop",
    "1",
    "-i",
    png,
    "-t",
    String(opts.after.seconds),
    "-c",
    "copy",
    tail,
  ]);
  await writeFile(list, `file '${head}'\nfile '${tail}'\n`);
  await ffmpeg(["-f", "concat", "-safe", "0", "-i", list, "-c", "copy", path]);
  await Promise.all([head, tail, png, list].map((file) => rm(file)));
}

/**
 * An ID3v2.4 tag of one text frame padded to about `bytes`, as an MP3 starts: its header and
 * frame sizes hold NUL bytes, which end the text a C-string probe reads, and FFmpeg's format
 * probe skips the whole tag before it looks at what follows.
 */
export function id3v2Tag(bytes = 64): Buffer {
  const syncsafe = (n: number) => Buffer.from([(n >> 21) & 0x7f, (n >> 14) & 0x7f, (n >> 7) & 0x7f, n & 0x7f]);
  const text = Buffer.concat([Buffer.from([3]), Buffer.from("a title", "utf8")]);
  const frame = Buffer.concat([Buffer.from("TIT2", "latin1"), syncsafe(text.length), Buffer.from([0, 0]), text]);
  const body = Buffer.concat([frame, Buffer.alloc(Math.max(0, bytes - 10 - frame.length))]);
  return Buffer.concat([Buffer.from("ID3", "latin1"), Buffer.from([4, 0, 0]), syncsafe(body.length), body]);
}
