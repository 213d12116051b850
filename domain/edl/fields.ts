/**
 * What reading a JSON document needs at every level: where problems are collected, field paths
 * as errors print them, own properties with `null` as absent. One pass over a document collects
 * all of its errors instead of stopping at the first (the kinds that read values: ./kinds.ts).
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

type AllRead<T> = { [K in keyof T]: Exclude<T[K], undefined> };

/**
 * A clip's required fields, once every one of them was read; undefined otherwise (each field
 * that was not has recorded its error). The order of `fields` is the clip's key order.
 */
export function allRead<T extends JsonObject>(fields: T): AllRead<T> | undefined {
  return Object.values(fields).every((value) => value !== undefined) ? (fields as AllRead<T>) : undefined;
}
