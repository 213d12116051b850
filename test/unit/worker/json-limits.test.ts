import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonShapeProblem, MAX_JSON_DEPTH, MAX_JSON_CONTAINERS } from "../../../worker/lib/json-limits";

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("JSON bodies: depth and size checked on the text before parsing", () => {
  it(`${MAX_JSON_DEPTH} levels pass, one more is refused; 100,000 levels are refused at once`, () => {
    expect(jsonShapeProblem(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(jsonShapeProblem(nested(MAX_JSON_DEPTH + 1))).toBe(`nests deeper than ${MAX_JSON_DEPTH} levels`);
    expect(jsonShapeProblem(`${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`)).toBe(
      `nests deeper than ${MAX_JSON_DEPTH} levels`,
    );
  });

  it("brackets and braces inside strings, escaped quotes included, do not count", () => {
    const inString = JSON.stringify({ text: `${"[{".repeat(MAX_JSON_CONTAINERS)}\\"]` });
    expect(jsonShapeProblem(inString)).toBeNull();
    expect(jsonShapeProblem(JSON.stringify(['a"[[[', "\\", nested(3)]))).toBeNull();
  });

  it(`${MAX_JSON_CONTAINERS} arrays and objects pass, one more does not; scalars do not count`, () => {
    const objects = (n: number) => JSON.stringify(Array.from({ length: n - 1 }, () => ({})));
    expect(jsonShapeProblem(objects(MAX_JSON_CONTAINERS))).toBeNull();
    expect(jsonShapeProblem(objects(MAX_JSON_CONTAINERS + 1))).toBe(
      `holds more than ${MAX_JSON_CONTAINERS} arrays and objects`,
    );
    expect(jsonShapeProblem(JSON.stringify(Array.from({ length: 1_000_000 }, (_, i) => i)))).toBeNull();
  });

  it("property: any JSON value within the limits passes, and the count never undercounts nesting", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 10 }), (value) => {
        const text = JSON.stringify(value);
        expect(jsonShapeProblem(text)).toBeNull();
        expect(jsonShapeProblem(`[${text}]`, depthOf(value))).toBe(`nests deeper than ${depthOf(value)} levels`);
      }),
      { numRuns: 500 },
    );
  });
});

function depthOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}
