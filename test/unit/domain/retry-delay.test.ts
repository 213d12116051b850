import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_RETRY_DELAY_MS, parseRetryDelay } from "../../../domain/retry-delay";

const delays = (expression: string, retries = 4) =>
  Array.from({ length: retries }, (_, retried) => parseRetryDelay(expression)(retried));

describe("QStash's retry-delay expressions", () => {
  it("gives QStash's own examples their documented delays, retried counting from 0", () => {
    expect(delays("1000")).toEqual([1000, 1000, 1000, 1000]);
    expect(delays("1000 * (1 + retried)")).toEqual([1000, 2000, 3000, 4000]);
    expect(delays("pow(2, retried) * 1000")).toEqual([1000, 2000, 4000, 8000]);
    expect(delays("max(1000, pow(2, retried) * 100)", 6)).toEqual([1000, 1000, 1000, 1000, 1600, 3200]);
  });

  it("binds * and / before + and -, left to right, with unary minus and parentheses", () => {
    expect(delays("1 + 2 * 3 - 4 / 2", 1)).toEqual([5]);
    expect(delays("100 / 10 / 2", 1)).toEqual([5]);
    expect(delays("(1 + 2) * 3", 1)).toEqual([9]);
    expect(delays("10 - -2 * +3", 1)).toEqual([16]);
    expect(delays("round(2.5) + floor(1.9) + ceil(0.1) + abs(-4) + sqrt(16)", 1)).toEqual([3 + 1 + 1 + 4 + 4]);
    expect(delays("min(9, 4, 7) + max(1, 8, 3)", 1)).toEqual([12]);
  });

  it("waits nothing below zero and at most a day", () => {
    expect(delays("1000 * (retried - 2)")).toEqual([0, 0, 0, 1000]);
    expect(delays("0 / 0", 1)).toEqual([0]);
    expect(delays("1 / 0", 1)).toEqual([MAX_RETRY_DELAY_MS]);
    expect(delays("exp(100)", 1)).toEqual([MAX_RETRY_DELAY_MS]);
  });

  it.each([
    ["", "empty"],
    ["   ", "empty"],
    ["1000 +", "ends early"],
    ["(1000", '")" expected'],
    ["1000)", 'unexpected ")"'],
    ["1000 retried", 'unexpected "retried"'],
    ["attempts * 1000", 'unknown name "attempts"'],
    ["constructor(1)", 'unknown name "constructor"'],
    ["pow(2)", "pow takes 2 arguments, given 1"],
    ["sqrt(1, 2)", "sqrt takes 1 argument, given 2"],
    ["min()", 'unexpected ")"'],
    ["2 ** 3", 'unexpected "*"'],
    ["1000ms", 'unexpected "ms"'],
    ["1000; process.exit()", 'unexpected ";"'],
  ])("refuses %j, naming what is wrong", (expression, message) => {
    expect(() => parseRetryDelay(expression)).toThrow(RangeError);
    expect(() => parseRetryDelay(expression)).toThrow(message);
  });

  it("reads back any expression written in the language as the value it stands for", () => {
    type Tree = { text: string; value: (retried: number) => number };
    const leaf: fc.Arbitrary<Tree> = fc.oneof(
      fc.integer({ min: 0, max: 5000 }).map((n) => ({ text: String(n), value: () => n })),
      fc.constant({ text: "retried", value: (r: number) => r }),
    );
    const { tree } = fc.letrec<{ tree: Tree }>((self) => ({
      tree: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        leaf,
        fc.tuple(self("tree"), fc.constantFrom("+", "-", "*", "/"), self("tree")).map(([a, op, b]) => ({
          text: `(${a.text} ${op} ${b.text})`,
          value: (r: number) => {
            const [x, y] = [a.value(r), b.value(r)];
            return op === "+" ? x + y : op === "-" ? x - y : op === "*" ? x * y : x / y;
          },
        })),
        fc
          .tuple(fc.constantFrom("min", "max"), fc.array(self("tree"), { minLength: 1, maxLength: 3 }))
          .map(([fn, args]) => ({
            text: `${fn}(${args.map((a) => a.text).join(", ")})`,
            value: (r: number) => Math[fn](...args.map((a) => a.value(r))),
          })),
        self("tree").map((a) => ({ text: `floor(${a.text})`, value: (r: number) => Math.floor(a.value(r)) })),
      ),
    }));
    fc.assert(
      fc.property(tree, fc.integer({ min: 0, max: 10 }), (t, retried) => {
        const expected = t.value(retried);
        const clamped = Number.isNaN(expected) ? 0 : Math.min(MAX_RETRY_DELAY_MS, Math.max(0, expected));
        expect(parseRetryDelay(t.text)(retried)).toBe(clamped);
      }),
    );
  });
});
