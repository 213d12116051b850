import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Parser } from "m3u8-parser";
import yauzl from "yauzl";

/** Every member of a ZIP, by name. */
export async function readZip(buffer: Buffer): Promise<Map<string, Buffer>> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(buffer, { lazyEntries: true }, (err, z) => (err ? reject(err) : resolve(z!))),
  );
  const members = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on("entry", (entry: yauzl.Entry) => {
      if (entry.fileName.endsWith("/")) return zip.readEntry();
      zip.openReadStream(entry, (err, stream) => {
        if (err || !stream) return reject(err);
        const chunks: Buffer[] = [];
        stream.on("data", (c) => chunks.push(c));
        stream.on("end", () => {
          members.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        });
      });
    });
    zip.on("end", resolve);
    zip.on("error", reject);
    zip.readEntry();
  });
  return members;
}

/** Writes ZIP members under a temp dir so FFmpeg and browsers can read them. */
export async function extract(members: Map<string, Buffer>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "zip-"));
  for (const [name, data] of members) {
    await mkdir(join(dir, dirname(name)), { recursive: true });
    await writeFile(join(dir, name), data);
  }
  return dir;
}

export function parseM3u8(text: string) {
  const parser = new Parser();
  parser.push(text);
  parser.end();
  return parser.manifest as {
    playlists?: { uri: string; attributes: { BANDWIDTH?: number; RESOLUTION?: { width: number; height: number } } }[];
    segments: { uri: string; duration: number; map?: { uri: string } }[];
  };
}

const resolveIn = (base: string, uri: string) => join(dirname(base), uri).replace(/^\.\//, "");

/**
 * A master playlist whose variants all resolve inside the ZIP, each with segments that exist.
 * Returns the variants' heights, highest first.
 */
export function checkHlsMaster(members: Map<string, Buffer>, masterName: string): number[] {
  const master = parseM3u8(members.get(masterName)!.toString("utf8"));
  const variants = master.playlists ?? [];
  if (variants.length === 0) throw new Error(`${masterName} has no variants`);
  const heights: number[] = [];
  for (const variant of variants) {
    const path = resolveIn(masterName, variant.uri);
    const media = members.get(path);
    if (!media) throw new Error(`variant ${variant.uri} is not in the ZIP`);
    if (!(variant.attributes.BANDWIDTH! > 0)) throw new Error(`variant ${variant.uri} has no BANDWIDTH`);
    const playlist = parseM3u8(media.toString("utf8"));
    if (playlist.segments.length === 0) throw new Error(`${path} has no segments`);
    for (const segment of playlist.segments) {
      if (!members.has(resolveIn(path, segment.uri))) throw new Error(`segment ${segment.uri} of ${path} is missing`);
      if (segment.map && !members.has(resolveIn(path, segment.map.uri)))
        throw new Error(`init ${segment.map.uri} is missing`);
    }
    heights.push(variant.attributes.RESOLUTION?.height ?? 0);
  }
  return heights.sort((a, b) => b - a);
}
