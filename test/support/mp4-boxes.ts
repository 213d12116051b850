/**
 * ISO BMFF boxes built by hand, byte for byte, for the tests of code that reads and rewrites fMP4
 * segments: only the boxes and fields it reads, each laid out as the format lays it out, so a test
 * states the exact values a segment holds.
 */

export const concat = (parts: readonly Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};

const u8 = (n: number) => Uint8Array.of(n & 0xff);
const u16 = (n: number) => Uint8Array.of((n >>> 8) & 0xff, n & 0xff);
function u32(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n >>> 0);
  return out;
}
function i32(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setInt32(0, n);
  return out;
}
function u64(n: number | bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(n));
  return out;
}

/** A box: its 32-bit size, its four-character type, then its body. */
function box(type: string, ...body: Uint8Array[]): Uint8Array {
  const content = concat(body);
  return concat([u32(8 + content.length), new TextEncoder().encode(type), content]);
}

/** A box with a 64-bit size (size field 1, the real size after the type). */
export function largeBox(type: string, ...body: Uint8Array[]): Uint8Array {
  const content = concat(body);
  return concat([u32(1), new TextEncoder().encode(type), u64(16 + content.length), content]);
}

/** A full box: a version byte and 24 bits of flags before its fields. */
function fullBox(type: string, version: number, flags: number, ...fields: Uint8Array[]): Uint8Array {
  return box(type, u8(version), u8(flags >>> 16), u16(flags & 0xffff), ...fields);
}

/** The track fragment's base media decode time, 32 bits (version 0) or 64 (version 1). */
const tfdt = (decode: number | bigint, version: 0 | 1 = 0) =>
  fullBox("tfdt", version, 0, version === 1 ? u64(decode) : u32(Number(decode)));

const tfhd = (trackId = 1) => fullBox("tfhd", 0, 0x020000, u32(trackId));

export interface TrunSample {
  duration?: number;
  size?: number;
  flags?: number;
  /** Presentation less decode time: unsigned in version 0, signed in version 1. */
  composition?: number;
}

/**
 * A track run: the flags say which per-sample fields are present, taken from the first sample
 * (every sample carries the same fields).
 */
export function trun(
  samples: readonly TrunSample[],
  options: { version?: 0 | 1; dataOffset?: number; firstSampleFlags?: number } = {},
): Uint8Array {
  const version = options.version ?? 0;
  const first = samples[0] ?? {};
  const flags =
    (options.dataOffset !== undefined ? 0x1 : 0) |
    (options.firstSampleFlags !== undefined ? 0x4 : 0) |
    (first.duration !== undefined ? 0x100 : 0) |
    (first.size !== undefined ? 0x200 : 0) |
    (first.flags !== undefined ? 0x400 : 0) |
    (first.composition !== undefined ? 0x800 : 0);
  const fields: Uint8Array[] = [u32(samples.length)];
  if (options.dataOffset !== undefined) fields.push(i32(options.dataOffset));
  if (options.firstSampleFlags !== undefined) fields.push(u32(options.firstSampleFlags));
  for (const s of samples) {
    if (flags & 0x100) fields.push(u32(s.duration ?? 0));
    if (flags & 0x200) fields.push(u32(s.size ?? 0));
    if (flags & 0x400) fields.push(u32(s.flags ?? 0));
    if (flags & 0x800) fields.push(version === 1 ? i32(s.composition ?? 0) : u32(s.composition ?? 0));
  }
  return fullBox("trun", version, flags, ...fields);
}

/** One track fragment: tfhd, tfdt, then a trun when it has samples. */
export function traf(decode: number | bigint, options: { version?: 0 | 1; trun?: Uint8Array; trackId?: number } = {}) {
  return box(
    "traf",
    tfhd(options.trackId),
    tfdt(decode, options.version ?? 0),
    ...(options.trun ? [options.trun] : []),
  );
}

export const moof = (sequence: number, ...trafs: Uint8Array[]) =>
  box("moof", fullBox("mfhd", 0, 0, u32(sequence)), ...trafs);

export const mdat = (size = 16) => box("mdat", new Uint8Array(size).fill(0xab));

export const styp = () => box("styp", new TextEncoder().encode("msdh"), u32(0), new TextEncoder().encode("msdhmsix"));

/** A segment index with one reference: its earliest presentation time 32 bits (version 0) or 64 (version 1). */
export function sidx(earliest: number | bigint, options: { version?: 0 | 1; timescale?: number } = {}) {
  const version = options.version ?? 0;
  const times = version === 1 ? [u64(earliest), u64(0)] : [u32(Number(earliest)), u32(0)];
  return fullBox(
    "sidx",
    version,
    0,
    u32(1),
    u32(options.timescale ?? 90_000),
    ...times,
    u16(0),
    u16(1),
    u32(1000),
    u32(90_000),
    u32(0x90000000),
  );
}

/** An avc1 sample entry: VisualSampleEntry's 78 bytes of fields, then its avcC (profile, compatibility, level). */
export function avc1Entry(profile: number, compatibility: number, level: number): Uint8Array {
  const avcC = box("avcC", u8(1), u8(profile), u8(compatibility), u8(level), u8(0xff), u8(0xe0));
  return box("avc1", new Uint8Array(78), avcC);
}

/** An mp4a sample entry: AudioSampleEntry's 28 bytes, then an esds whose AudioSpecificConfig names `audioObjectType`. */
export function mp4aEntry(audioObjectType: number): Uint8Array {
  const descriptor = (tag: number, ...body: Uint8Array[]) => {
    const content = concat(body);
    return concat([u8(tag), u8(content.length), content]);
  };
  // AudioSpecificConfig: 5 bits of object type, 4 of the rate index (48 kHz: 3), 4 of the channels (2).
  const specific = ((audioObjectType << 11) | (3 << 7) | (2 << 3)) & 0xffff;
  const decoderConfig = descriptor(
    0x04,
    u8(0x40),
    u8(0x15),
    new Uint8Array(3),
    u32(128_000),
    u32(128_000),
    descriptor(0x05, u16(specific)),
  );
  const es = descriptor(0x03, u16(1), u8(0), decoderConfig);
  return box("mp4a", new Uint8Array(28), fullBox("esds", 0, 0, es));
}

/**
 * An init segment of one track: ftyp, then moov › trak › mdia › mdhd with the track's timescale
 * (mdhd version 0: 32-bit times; version 1: 64-bit), and the sample entry, when given, under
 * minf › stbl › stsd.
 */
export function initSegment(timescale: number, options: { mdhdVersion?: 0 | 1; entry?: Uint8Array } = {}) {
  const version = options.mdhdVersion ?? 0;
  const times = version === 1 ? [u64(0), u64(0), u32(timescale), u64(0)] : [u32(0), u32(0), u32(timescale), u32(0)];
  const mdhd = fullBox("mdhd", version, 0, ...times, u16(0x55c4), u16(0));
  const hdlr = fullBox("hdlr", 0, 0, u32(0), new TextEncoder().encode("vide"), u32(0), u32(0), u32(0), u8(0));
  const mvhd = fullBox("mvhd", 0, 0, u32(0), u32(0), u32(1000), u32(0), new Uint8Array(80));
  const stsd = options.entry ? [box("minf", box("stbl", fullBox("stsd", 0, 0, u32(1), options.entry)))] : [];
  return concat([
    box("ftyp", new TextEncoder().encode("iso5"), u32(512), new TextEncoder().encode("iso5iso6mp41")),
    box("moov", mvhd, box("trak", box("mdia", mdhd, hdlr, ...stsd))),
  ]);
}
