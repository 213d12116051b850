/**
 * What a stream's playlists say of each rendition that only its first segment knows: its RFC 6381
 * codecs string (HLS's CODECS, DASH's @codecs; the level x264 chose, say), and for fMP4 its
 * track's timescale. Pure: read off the bytes FFmpeg wrote.
 */

interface Box {
  type: string;
  /** The box's body: after its size and type. */
  body: Uint8Array;
}

/** The boxes laid end to end in `bytes`. */
function boxes(bytes: Uint8Array): Box[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const found: Box[] = [];
  for (let at = 0; at + 8 <= bytes.length; ) {
    let size = view.getUint32(at);
    let header = 8;
    if (size === 1 && at + 16 <= bytes.length) {
      size = Number(view.getBigUint64(at + 8));
      header = 16;
    } else if (size === 0) size = bytes.length - at;
    if (size < header || at + size > bytes.length) break;
    found.push({
      type: String.fromCharCode(...bytes.subarray(at + 4, at + 8)),
      body: bytes.subarray(at + header, at + size),
    });
    at += size;
  }
  return found;
}

/** The first box found along `path` of nested boxes, or undefined. */
function find(bytes: Uint8Array, path: readonly string[]): Box | undefined {
  let level = boxes(bytes);
  let box: Box | undefined;
  for (const type of path) {
    box = level.find((b) => b.type === type);
    if (!box) return undefined;
    level = boxes(box.body);
  }
  return box;
}

const hex2 = (n: number) => n.toString(16).padStart(2, "0");

/** The bytes a sample entry holds before its child boxes: VisualSampleEntry's 78, AudioSampleEntry's 28. */
const VISUAL_ENTRY_FIELDS = 78;
const AUDIO_ENTRY_FIELDS = 28;

function avcCodecs(entry: string, avcC: Uint8Array): string {
  return `${entry}.${hex2(avcC[1])}${hex2(avcC[2])}${hex2(avcC[3])}`;
}

/** ISO/IEC 14496-15 annex E: profile space and idc, compatibility flags bit-reversed, tier and level, constraint bytes. */
function hevcCodecs(entry: string, hvcC: Uint8Array): string {
  const space = ["", "A", "B", "C"][hvcC[1] >> 6];
  const tier = hvcC[1] & 0x20 ? "H" : "L";
  const profile = hvcC[1] & 0x1f;
  let flags = ((hvcC[2] << 24) | (hvcC[3] << 16) | (hvcC[4] << 8) | hvcC[5]) >>> 0;
  let reversed = 0;
  for (let i = 0; i < 32; i++) {
    reversed = ((reversed << 1) | (flags & 1)) >>> 0;
    flags >>>= 1;
  }
  const constraints = [...hvcC.subarray(6, 12)];
  while (constraints.length > 0 && constraints[constraints.length - 1] === 0) constraints.pop();
  const tail = constraints.map((b) => b.toString(16).toUpperCase()).join(".");
  return `${entry}.${space}${profile}.${reversed.toString(16).toUpperCase()}.${tier}${hvcC[12]}${tail ? `.${tail}` : ""}`;
}

/** The AV1 codecs parameter string: profile, level and tier, bit depth. */
function av1Codecs(av1C: Uint8Array): string {
  const profile = av1C[1] >> 5;
  const level = av1C[1] & 0x1f;
  const tier = av1C[2] & 0x80 ? "H" : "M";
  const high = (av1C[2] & 0x40) !== 0;
  const twelve = (av1C[2] & 0x20) !== 0;
  return `av01.${profile}.${hex2(level)}${tier}.${high ? (twelve ? "12" : "10") : "08"}`;
}

/** An MPEG-4 descriptor's body: its tag, a length of up to four 7-bit bytes, then the bytes. */
function descriptor(bytes: Uint8Array, at: number): { tag: number; body: Uint8Array; end: number } | undefined {
  if (at >= bytes.length) return undefined;
  const tag = bytes[at];
  let length = 0;
  let i = at + 1;
  for (let n = 0; n < 4 && i < bytes.length; n++) {
    const b = bytes[i++];
    length = (length << 7) | (b & 0x7f);
    if (!(b & 0x80)) break;
  }
  return { tag, body: bytes.subarray(i, i + length), end: i + length };
}

/** mp4a.<objectTypeIndication>.<audio object type> from an esds box's descriptors. */
function aacCodecs(esds: Uint8Array): string | undefined {
  const es = descriptor(esds, 4);
  if (es?.tag !== 0x03) return undefined;
  const flags = es.body[2];
  let at = 3 + (flags & 0x80 ? 2 : 0) + (flags & 0x40 ? 1 + es.body[3] : 0) + (flags & 0x20 ? 2 : 0);
  for (let d = descriptor(es.body, at); d; at = d.end, d = descriptor(es.body, at)) {
    if (d.tag !== 0x04) continue;
    const objectType = d.body[0];
    const specific = descriptor(d.body, 13);
    const audioObjectType = specific?.tag === 0x05 ? specific.body[0] >> 3 : undefined;
    return audioObjectType ? `mp4a.${hex2(objectType)}.${audioObjectType}` : `mp4a.${hex2(objectType)}`;
  }
  return undefined;
}

/** The codecs string of an fMP4 init segment's one track, or undefined when it holds none this knows. */
export function codecsOfInit(init: Uint8Array): string | undefined {
  const stsd = find(init, ["moov", "trak", "mdia", "minf", "stbl", "stsd"]);
  if (!stsd) return undefined;
  const [entry] = boxes(stsd.body.subarray(8));
  if (!entry) return undefined;
  if (entry.type === "mp4a") {
    const esds = boxes(entry.body.subarray(AUDIO_ENTRY_FIELDS)).find((b) => b.type === "esds");
    return esds && aacCodecs(esds.body);
  }
  if (entry.type === "Opus") return "opus";
  const children = boxes(entry.body.subarray(VISUAL_ENTRY_FIELDS));
  const config = (type: string) => children.find((b) => b.type === type)?.body;
  const avcC = config("avcC");
  if ((entry.type === "avc1" || entry.type === "avc3") && avcC) return avcCodecs(entry.type, avcC);
  const hvcC = config("hvcC");
  if ((entry.type === "hvc1" || entry.type === "hev1") && hvcC) return hevcCodecs(entry.type, hvcC);
  const av1C = config("av1C");
  if (entry.type === "av01" && av1C) return av1Codecs(av1C);
  return undefined;
}

/** The track's timescale from an init segment's mdhd. */
export function timescaleOfInit(init: Uint8Array): number | undefined {
  const mdhd = find(init, ["moov", "trak", "mdia", "mdhd"]);
  if (!mdhd) return undefined;
  const view = new DataView(mdhd.body.buffer, mdhd.body.byteOffset, mdhd.body.byteLength);
  return mdhd.body[0] === 1 ? view.getUint32(20) : view.getUint32(12);
}

/**
 * The codecs string of an MPEG-TS segment's stream: H.264's from its first sequence parameter set
 * (profile, constraints, level, right after the NAL header), AAC's from its first ADTS header.
 */
export function codecsOfTs(segment: Uint8Array, kind: "video" | "audio"): string | undefined {
  if (kind === "video") {
    for (let i = 0; i + 6 < segment.length; i++) {
      if (segment[i] === 0 && segment[i + 1] === 0 && segment[i + 2] === 1 && (segment[i + 3] & 0x1f) === 7)
        return `avc1.${hex2(segment[i + 4])}${hex2(segment[i + 5])}${hex2(segment[i + 6])}`;
    }
    return undefined;
  }
  for (let i = 0; i + 2 < segment.length; i++) {
    // ADTS: 12 sync bits, then the profile (audio object type less one) in the third byte's top two.
    if (segment[i] === 0xff && (segment[i + 1] & 0xf6) === 0xf0) return `mp4a.40.${(segment[i + 2] >> 6) + 1}`;
  }
  return undefined;
}
