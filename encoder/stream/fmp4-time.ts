/**
 * Where an fMP4 segment's samples sit on the stream's clock. FFmpeg's muxer starts each run's
 * decode times at 0 (each track's first decode time taken as its origin, whatever -copyts and
 * -output_ts_offset say), so a stream made by several runs, or whose tracks start apart, would
 * restart or slide at each. The encoder moves every segment's decode times by what its run's
 * first sample was meant to be: the `tfdt` of each fragment and the `sidx`'s earliest
 * presentation time, rewritten in place (both are fixed-width fields). Pure, on the bytes.
 */

interface Found {
  type: string;
  /** Offset of the box's body in the buffer. */
  body: number;
  end: number;
}

function boxesIn(bytes: Uint8Array, from: number, to: number): Found[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const found: Found[] = [];
  for (let at = from; at + 8 <= to; ) {
    let size = view.getUint32(at);
    let header = 8;
    if (size === 1) {
      size = Number(view.getBigUint64(at + 8));
      header = 16;
    } else if (size === 0) size = to - at;
    if (size < header || at + size > to) break;
    found.push({ type: String.fromCharCode(...bytes.subarray(at + 4, at + 8)), body: at + header, end: at + size });
    at += size;
  }
  return found;
}

const viewOf = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** The first fragment's decode time, and its first sample's composition offset (presentation less decode), in timescale units. */
export function firstSampleTimes(segment: Uint8Array): { decode: number; composition: number } | undefined {
  const view = viewOf(segment);
  const moof = boxesIn(segment, 0, segment.length).find((b) => b.type === "moof");
  const traf = moof && boxesIn(segment, moof.body, moof.end).find((b) => b.type === "traf");
  if (!traf) return undefined;
  const children = boxesIn(segment, traf.body, traf.end);
  const tfdt = children.find((b) => b.type === "tfdt");
  if (!tfdt) return undefined;
  const decode = segment[tfdt.body] === 1 ? Number(view.getBigUint64(tfdt.body + 4)) : view.getUint32(tfdt.body + 4);
  const trun = children.find((b) => b.type === "trun");
  if (!trun) return { decode, composition: 0 };
  const version = segment[trun.body];
  const flags = view.getUint32(trun.body) & 0xffffff;
  if (!(flags & 0x800) || view.getUint32(trun.body + 4) === 0) return { decode, composition: 0 };
  // After the sample count: the data offset and first sample's flags when present, then the first sample's fields.
  let at = trun.body + 8 + (flags & 0x1 ? 4 : 0) + (flags & 0x4 ? 4 : 0);
  at += (flags & 0x100 ? 4 : 0) + (flags & 0x200 ? 4 : 0) + (flags & 0x400 ? 4 : 0);
  const composition = version === 1 ? view.getInt32(at) : view.getUint32(at);
  return { decode, composition };
}

/**
 * Moves every decode time of a segment by `delta` timescale units, in place: each fragment's tfdt
 * and the sidx's earliest presentation time. Throws when a moved time would not fit its field.
 */
export function shiftDecodeTimes(segment: Uint8Array, delta: number): void {
  if (delta === 0) return;
  const view = viewOf(segment);
  const move = (at: number, wide: boolean) => {
    const moved = (wide ? Number(view.getBigUint64(at)) : view.getUint32(at)) + delta;
    if (moved < 0 || (!wide && moved > 0xffffffff) || !Number.isSafeInteger(moved))
      throw new Error(`a segment's decode time moved to ${moved}, out of its field`);
    if (wide) view.setBigUint64(at, BigInt(moved));
    else view.setUint32(at, moved);
  };
  for (const box of boxesIn(segment, 0, segment.length)) {
    if (box.type === "sidx") move(box.body + 12, segment[box.body] === 1);
    if (box.type !== "moof") continue;
    for (const traf of boxesIn(segment, box.body, box.end).filter((b) => b.type === "traf"))
      for (const tfdt of boxesIn(segment, traf.body, traf.end).filter((b) => b.type === "tfdt"))
        move(tfdt.body + 4, segment[tfdt.body] === 1);
  }
}
