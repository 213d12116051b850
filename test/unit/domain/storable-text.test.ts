import { describe, expect, it } from "vitest";
import {
  MAX_UNSTORABLE_PATHS,
  nonFiniteNumberPaths,
  UNSTORABLE_TEXT_MESSAGE,
  unstorableTextPaths,
} from "../../../domain/storable-text";
import { CLIP0, errorsOf, videoClip, videoEdl } from "../edl/fixtures";

describe("numbers JSON.parse could not hold", () => {
  it("finds Infinity and -Infinity (1e400, -1e400) at their paths; NaN cannot come from JSON but is found too", () => {
    expect(nonFiniteNumberPaths(JSON.parse('{"a":1e400,"b":[1,-1e400,{"c":1e308}],"d":"1e400"}'))).toEqual([
      "a",
      "b[1]",
    ]);
    expect(nonFiniteNumberPaths(Number.NaN)).toEqual([""]);
    expect(nonFiniteNumberPaths({ max: Number.MAX_VALUE, min: -Number.MAX_VALUE, tiny: 5e-324 })).toEqual([]);
  });
});

describe("text Postgres cannot store", () => {
  it("finds NUL and unpaired surrogates in keys and values, at their paths", () => {
    expect(
      unstorableTextPaths({
        fine: "ok 😀",
        nul: "a\u0000b",
        list: ["x", "\ud800"],
        nested: { "\u0000key": 1, low: "\udc00y", pair: "\ud83d\ude00" },
      }).sort(),
    ).toEqual(["list[1]", "nested.\u0000key", "nested.low", "nul"]);
    expect(unstorableTextPaths("\u0000")).toEqual([""]);
    expect(unstorableTextPaths([1, null, true, "plain"])).toEqual([]);
  });

  it("reports in document order, and at most a handful: a body full of NULs makes a short answer", () => {
    expect(unstorableTextPaths({ b: "\u0000", a: ["ok", { c: "\ud800" }], "\u0000": { d: "\u0000" } })).toEqual([
      "b",
      "a[1].c",
      "\u0000",
    ]);
    const many = Array.from({ length: 100_000 }, () => "\u0000");
    expect(unstorableTextPaths(many)).toEqual(Array.from({ length: MAX_UNSTORABLE_PATHS }, (_, i) => `[${i}]`));
  });

  it("walks 100,000 levels of nesting without overflowing the stack", () => {
    let deep: unknown = "\u0000";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(unstorableTextPaths(deep)).toEqual(["[0]".repeat(100_000)]);
  });

  it("makes an otherwise valid timeline invalid, naming the field", () => {
    expect(errorsOf(videoEdl(videoClip()))).toEqual([]);
    expect(errorsOf(videoEdl(videoClip({ label: "x\u0000" })))).toEqual([`${CLIP0}.label: ${UNSTORABLE_TEXT_MESSAGE}`]);
    expect(errorsOf({ ...videoEdl(videoClip()), metadata: { "\ud800": 1 } })).toEqual([
      `metadata.\ud800: ${UNSTORABLE_TEXT_MESSAGE}`,
    ]);
  });
});
