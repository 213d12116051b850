import { describe, expect, it } from "vitest";
import { ffSeconds } from "../../../encoder/timeline/time";

describe("ffSeconds: time values as FFmpeg parses them", () => {
  it.each([
    [2, "2"],
    [1.5, "1.5"],
    [0.1 + 0.2, "0.3"],
    [123.4567891, "123.456789"],
    [0.000001, "0.000001"],
    [1e-7, "0"],
    [-1e-9, "0"],
    [360000, "360000"],
  ])("%s → %s", (value, text) => {
    expect(ffSeconds(value)).toBe(text);
  });
});
