/**
 * Readers for one JSON object's fields. Each returns the value when it is acceptable and
 * `undefined` otherwise, recording "path: message" for every problem, so one pass over a
 * document collects all of its errors instead of stopping at the first.
 *
 * `null` counts as absent: clients often serialise unset optionals as null.
 * Values are never coerced: "2" is not the number 2.
 */

export type JsonObject = Record<string, unknown>;

/** Where a validation pass collects what it finds. */
export interface Issues {
  errors: string[];
  warnings: string[];
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An own property; `null` reads as absent. */
export function own(source: JsonObject, key: string): unknown {
  const value = Object.hasOwn(source, key) ? source[key] : undefined;
  return value === null ? undefined : value;
}

/** Field paths as the errors print them: `timeline.tracks[0].clips[1].speed`. */
export function fieldPath(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  return parent === "" ? key : `${parent}.${key}`;
}

interface NumberRule {
  min?: number;
  max?: number;
  /** `min` itself is not allowed (durations, sizes). */
  aboveMin?: boolean;
}

function describeRange({ min, max, aboveMin }: NumberRule): string {
  const lower = min === undefined ? undefined : aboveMin ? `greater than ${min}` : `at least ${min}`;
  if (min !== undefined && max !== undefined && !aboveMin) return `must be between ${min} and ${max}`;
  if (lower !== undefined && max !== undefined) return `must be ${lower} and at most ${max}`;
  if (lower !== undefined) return `must be ${lower}`;
  return `must be at most ${max}`;
}

function inRange(value: number, { min, max, aboveMin }: NumberRule): boolean {
  if (min !== undefined && (aboveMin ? value <= min : value < min)) return false;
  return max === undefined || value <= max;
}

export interface Fields {
  path(key: string): string;
  /** Whether the caller gave the field at all (null counts as not given). */
  has(key: string): boolean;
  /** A non-blank string: no field of the EDL means anything when blank. */
  string(key: string, required?: boolean): string | undefined;
  number(key: string, rule?: NumberRule & { required?: boolean }): number | undefined;
  boolean(key: string): boolean | undefined;
  oneOf<T extends string>(key: string, values: readonly T[], required?: boolean): T | undefined;
  /** A value `parse` accepts; otherwise "must be <expected>". */
  parsed<T>(key: string, parse: (value: unknown) => T | undefined, expected: string, required?: boolean): T | undefined;
  object(key: string): JsonObject | undefined;
  array(key: string, required?: boolean): unknown[] | undefined;
  fail(key: string, message: string): undefined;
}

export function fieldsOf(source: JsonObject, path: string, errors: string[]): Fields {
  const given = (key: string): boolean => own(source, key) !== undefined;
  const fail = (key: string, message: string): undefined => {
    errors.push(`${fieldPath(path, key)}: ${message}`);
    return undefined;
  };
  /** Runs `read` on a given field; reports a missing required one. */
  function read<T>(
    key: string,
    required: boolean | undefined,
    check: (value: unknown) => T | undefined,
  ): T | undefined {
    if (!given(key)) return required ? fail(key, "is required") : undefined;
    return check(own(source, key));
  }

  return {
    path: (key) => fieldPath(path, key),
    has: given,
    fail,
    string: (key, required) =>
      read(key, required, (value) => {
        if (typeof value !== "string") return fail(key, "must be a string");
        return value.trim() === "" ? fail(key, "must not be empty") : value;
      }),
    number: (key, rule = {}) =>
      read(key, rule.required, (value) => {
        if (typeof value !== "number" || !Number.isFinite(value)) return fail(key, "must be a number");
        return inRange(value, rule) ? value : fail(key, describeRange(rule));
      }),
    boolean: (key) =>
      read(key, false, (value) => (typeof value === "boolean" ? value : fail(key, "must be true or false"))),
    oneOf: (key, values, required) =>
      read(key, required, (value) =>
        values.includes(value as never)
          ? (value as (typeof values)[number])
          : fail(key, `must be one of ${values.join(", ")}`),
      ),
    parsed: (key, parse, expected, required) =>
      read(key, required, (value) => {
        const result = parse(value);
        return result === undefined ? fail(key, `must be ${expected}`) : result;
      }),
    object: (key) => read(key, false, (value) => (isObject(value) ? value : fail(key, "must be an object"))),
    array: (key, required) =>
      read(key, required, (value) => (Array.isArray(value) ? value : fail(key, "must be an array"))),
  };
}

type AllRead<T> = { [K in keyof T]: Exclude<T[K], undefined> };

/**
 * A clip's required fields, once every one of them was read; undefined otherwise (each field
 * that was not has recorded its error). The order of `fields` is the clip's key order.
 */
export function allRead<T extends JsonObject>(fields: T): AllRead<T> | undefined {
  return Object.values(fields).every((value) => value !== undefined) ? (fields as AllRead<T>) : undefined;
}
