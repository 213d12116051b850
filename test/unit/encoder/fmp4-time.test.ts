import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { firstSampleTimes, shiftDecodeTimes } from "../../../encoder/stream/fmp4-time";
import { concat, largeBox, mdat, moof, sidx, styp, traf, trun } from "../../support/mp4-boxes";

/** A media segment as FFmpeg's HLS muxer writes one: styp, sidx, then a moof and its mdat per fragment. */
function segment(
  fragments: readonly { decode: number | bigint; version?: 0 | 1; trun?: Uint8Array }[],
  index?: { earliest: number | bigint; version?: 0 | 1 },
) {
  return concat([
    styp(),
    ...(index ? [sidx(index.earliest, { version: index.version })] : []),
    ...fragments.flatMap((f, i) => [moof(i + 1, traf(f.decode, { version: f.version, trun: f.trun })), mdat()]),
  ]);
}

const samples = (composition: number[]) => composition.map((c) => ({ duration: 3000, size: 1200, composition: c }));

describe("firstSampleTimes (encoder/stream/fmp4-time.ts)", () => {
  it("the first fragment's decode time, from a 32-bit tfdt and a 64-bit one", () => {
    expect(firstSampleTimes(segment([{ decode: 900_000 }]))).toEqual({ decode: 900_000, composition: 0 });
    const wide = 2 ** 33 + 5;
    expect(firstSampleTimes(segment([{ decode: wide, version: 1 }]))).toEqual({ decode: wide, composition: 0 });
  });

  it("behind a sidx, and of several fragments the first's", () => {
    const bytes = segment(
      [
        { decode: 180_000, trun: trun(samples([6000, 0])) },
        { decode: 360_000, trun: trun(samples([9000])) },
      ],
      { earliest: 186_000 },
    );
    expect(firstSampleTimes(bytes)).toEqual({ decode: 180_000, composition: 6000 });
  });

  it("the first sample's composition offset: unsigned in a version 0 trun, signed in a version 1", () => {
    expect(firstSampleTimes(segment([{ decode: 1000, trun: trun(samples([3_000_000_000])) }]))).toEqual({
      decode: 1000,
      composition: 3_000_000_000,
    });
    expect(firstSampleTimes(segment([{ decode: 1000, trun: trun(samples([-1024, 0]), { version: 1 }) }]))).toEqual({
      decode: 1000,
      composition: -1024,
    });
  });

  it("past a data offset and first-sample flags, and the per-sample fields before the offset", () => {
    const run = trun(
      [
        { duration: 1024, size: 300, flags: 0x02000000, composition: 2048 },
        { duration: 1024, size: 310, flags: 0x01010000, composition: 0 },
      ],
      { dataOffset: 120, firstSampleFlags: 0x02000000 },
    );
    expect(firstSampleTimes(segment([{ decode: 48_000, trun: run }]))).toEqual({ decode: 48_000, composition: 2048 });
  });

  it("no composition offsets, or no samples: the decode time alone", () => {
    const noOffsets = trun([{ duration: 3000, size: 10 }]);
    expect(firstSampleTimes(segment([{ decode: 7, trun: noOffsets }]))).toEqual({ decode: 7, composition: 0 });
    const empty = trun([], { dataOffset: 0 });
    expect(firstSampleTimes(segment([{ decode: 7, trun: empty }]))).toEqual({ decode: 7, composition: 0 });
  });

  it("nothing to read: no moof, or a traf without a tfdt", () => {
    expect(firstSampleTimes(concat([styp(), mdat()]))).toBeUndefined();
    expect(firstSampleTimes(new Uint8Array(0))).toBeUndefined();
    const withoutTfdt = concat([moof(1, largeBox("traf")), mdat()]);
    expect(firstSampleTimes(withoutTfdt)).toBeUndefined();
  });
});

describe("shiftDecodeTimes (encoder/stream/fmp4-time.ts)", () => {
  it("moves every fragment's tfdt and the sidx's earliest presentation time, and nothing else", () => {
    const run = trun(samples([6000, 0]));
    const before = segment(
      [
        { decode: 0, trun: run },
        { decode: 180_000, trun: run },
        { decode: 360_000, trun: run },
      ],
      { earliest: 6000 },
    );
    shiftDecodeTimes(before, 900_000);
    const after = segment(
      [
        { decode: 900_000, trun: run },
        { decode: 1_080_000, trun: run },
        { decode: 1_260_000, trun: run },
      ],
      { earliest: 906_000 },
    );
    expect(before).toEqual(after);
  });

  it("64-bit fields past 32 bits, back as well as forward", () => {
    const bytes = segment([{ decode: 2 ** 32 - 10, version: 1 }], { earliest: 2 ** 32 - 10, version: 1 });
    shiftDecodeTimes(bytes, 100);
    expect(bytes).toEqual(segment([{ decode: 2 ** 32 + 90, version: 1 }], { earliest: 2 ** 32 + 90, version: 1 }));
    shiftDecodeTimes(bytes, -(2 ** 32));
    expect(bytes).toEqual(segment([{ decode: 90, version: 1 }], { earliest: 90, version: 1 }));
  });

  it("a move of 0 changes nothing", () => {
    const bytes = segment([{ decode: 5, trun: trun(samples([1])) }], { earliest: 6 });
    const copy = bytes.slice();
    shiftDecodeTimes(bytes, 0);
    expect(bytes).toEqual(copy);
  });

  it("refuses a time moved out of its field: past 32 bits in a version 0 box, or below 0", () => {
    expect(() => shiftDecodeTimes(segment([{ decode: 2 ** 32 - 10 }]), 10)).toThrow(
      "a segment's decode time moved to 4294967296, out of its field",
    );
    expect(() => shiftDecodeTimes(segment([{ decode: 0 }], { earliest: 2 ** 32 - 1 }), 1)).toThrow(/out of its field/);
    expect(() => shiftDecodeTimes(segment([{ decode: 5, version: 1 }]), -6)).toThrow(
      "a segment's decode time moved to -1, out of its field",
    );
  });

  it("property: the shifted segment is the segment built at the shifted times, and reads back so", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ decode: fc.integer({ min: 0, max: 2 ** 31 }), version: fc.constantFrom<0 | 1>(0, 1) }), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.integer({ min: -3000, max: 3000 }),
        (fragments, delta, composition) => {
          const least = Math.min(...fragments.map((f) => f.decode));
          fc.pre(least + delta >= 0);
          const version = composition < 0 ? 1 : 0;
          const run = trun(samples([composition]), { version });
          const built = (move: number) =>
            segment(
              fragments.map((f) => ({ decode: f.decode + move, version: f.version, trun: run })),
              { earliest: least + move, version: 1 },
            );
          const bytes = built(0);
          shiftDecodeTimes(bytes, delta);
          expect(bytes).toEqual(built(delta));
          expect(firstSampleTimes(bytes)).toEqual({ decode: fragments[0].decode + delta, composition });
        },
      ),
    );
  });
});
