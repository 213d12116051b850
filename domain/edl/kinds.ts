/**
 * The one description of the EDL format. A kind reads one JSON value the way the
 * contract's tables say (docs/contract.md §3.10–§3.14), recording "path: message" for whatever it
 * refuses, and describes the same rule as JSON Schema for the OpenAPI document. A field of a table
 * adds its name, whether it is required, its default and its documentation. So a field is written
 * once: the validator reads with it, and worker/routes/edl/document.ts publishes its schema.
 *
 * `null` counts as absent: clients often serialise unset optionals as null.
 * Values are never coerced: "2" is not the number 2.
 */
import { fieldPath, type Issues, isObject, type JsonObject, own } from "./fields";

export type JsonSchema = Record<string, unknown>;

export interface Kind<T> {
  /** The value when acceptable; otherwise undefined, with the reason recorded under `path`. */
  read(value: unknown, path: string, issues: Issues): T | undefined;
  /** What `read` accepts, as JSON Schema: a `$ref` for a named kind. */
  schema: JsonSchema;
  /** The named schemas this kind's schema refers to, itself included, by component name. */
  components: Record<string, JsonSchema>;
}

export interface Field<T> {
  kind: Kind<T>;
  required?: boolean;
  /** What an absent or refused value reads as, and what the reference shows as the default. */
  default?: T;
  description?: string;
  example?: unknown;
}

/** An object's fields in reading order: the order its errors are reported in. */
export type Table = Record<string, Field<unknown>>;

/** The value a table's field reads as: never undefined when the field has a default. */
type ValueOf<F> = F extends { kind: Kind<infer T> } ? (F extends { default: unknown } ? T : T | undefined) : never;

const fail = (issues: Issues, path: string, message: string): undefined => {
  issues.errors.push(`${path}: ${message}`);
  return undefined;
};

const leaf = <T>(schema: JsonSchema, read: Kind<T>["read"]): Kind<T> => ({ read, schema, components: {} });

export interface NumberRule {
  min?: number;
  max?: number;
  /** `min` itself is not allowed (durations, sizes). */
  aboveMin?: boolean;
  /** `max` itself is not allowed (a crop's fraction: all of the frame leaves nothing). */
  belowMax?: boolean;
}

function describeRange({ min, max, aboveMin, belowMax }: NumberRule): string {
  const lower = min === undefined ? undefined : aboveMin ? `greater than ${min}` : `at least ${min}`;
  if (min !== undefined && max !== undefined && !aboveMin && !belowMax) return `must be between ${min} and ${max}`;
  const upper = belowMax ? `below ${max}` : `at most ${max}`;
  if (lower !== undefined && max !== undefined) return `must be ${lower} and ${upper}`;
  if (lower !== undefined) return `must be ${lower}`;
  return `must be ${upper}`;
}

function inRange(value: number, { min, max, aboveMin, belowMax }: NumberRule): boolean {
  if (min !== undefined && (aboveMin ? value <= min : value < min)) return false;
  return max === undefined || (belowMax ? value < max : value <= max);
}

export const number = (rule: NumberRule = {}): Kind<number> =>
  leaf(
    {
      type: "number",
      ...(rule.min !== undefined && (rule.aboveMin ? { exclusiveMinimum: rule.min } : { minimum: rule.min })),
      ...(rule.max !== undefined && (rule.belowMax ? { exclusiveMaximum: rule.max } : { maximum: rule.max })),
    },
    (value, path, issues) => {
      if (typeof value !== "number" || !Number.isFinite(value)) return fail(issues, path, "must be a number");
      return inRange(value, rule) ? value : fail(issues, path, describeRange(rule));
    },
  );

/** A non-blank string: no field of the EDL means anything when blank. */
export const text = (maxLength?: number): Kind<string> =>
  leaf({ type: "string", minLength: 1, ...(maxLength !== undefined && { maxLength }) }, (value, path, issues) => {
    if (typeof value !== "string") return fail(issues, path, "must be a string");
    if (value.trim() === "") return fail(issues, path, "must not be empty");
    if (maxLength !== undefined && value.length > maxLength)
      return fail(issues, path, `must be at most ${maxLength} characters`);
    return value;
  });

export const boolean = (): Kind<boolean> =>
  leaf({ type: "boolean" }, (value, path, issues) =>
    typeof value === "boolean" ? value : fail(issues, path, "must be true or false"),
  );

/**
 * One of a fixed list of strings. `quoted` writes them as JSON strings in the error, where a bare
 * word would read as something else (versions: "1.0" is not the number 1.0).
 */
export const oneOf = <T extends string>(values: readonly T[], quoted = false): Kind<T> =>
  leaf({ type: "string", enum: [...values] }, (value, path, issues) =>
    values.includes(value as T)
      ? (value as T)
      : fail(issues, path, `must be one of ${values.map((v) => (quoted ? JSON.stringify(v) : v)).join(", ")}`),
  );

/** A value `parse` accepts; otherwise "must be <expected>". */
export const parsed = <T>(parse: (value: unknown) => T | undefined, expected: string, schema: JsonSchema): Kind<T> =>
  leaf(schema, (value, path, issues) => parse(value) ?? fail(issues, path, `must be ${expected}`));

/** Any JSON value, taken as it is: the 1.0 properties accepted without being applied. */
export const anything = (): Kind<unknown> => leaf({}, (value) => value);

/** An array taken as it is, its items for the caller to read (a track's clips). */
export const list = (): Kind<unknown[]> =>
  leaf({ type: "array" }, (value, path, issues) =>
    Array.isArray(value) ? value : fail(issues, path, "must be an array"),
  );

/** Any JSON object, taken as it is (`metadata`: stored, never read). */
export const record = (): Kind<JsonObject> =>
  leaf({ type: "object", additionalProperties: {} }, (value, path, issues) =>
    isObject(value) ? value : fail(issues, path, "must be an object"),
  );

/** Schemas of the given kinds' named parts, together. */
const componentsOf = (kinds: Kind<unknown>[]) => Object.assign({}, ...kinds.map((k) => k.components));

/** The first kind whose test matches the value reads it; the schema is any of theirs. */
export function either<T>(choices: { test: (value: unknown) => boolean; kind: Kind<T> }[], expected: string): Kind<T> {
  return {
    schema: { anyOf: choices.map((c) => c.kind.schema) },
    components: componentsOf(choices.map((c) => c.kind)),
    read: (value, path, issues) => {
      const choice = choices.find((c) => c.test(value));
      return choice ? choice.kind.read(value, path, issues) : fail(issues, path, `must be ${expected}`);
    },
  };
}

export const array = <T>(item: Kind<T>, maxItems?: number): Kind<T[]> => ({
  schema: { type: "array", items: item.schema, ...(maxItems !== undefined && { maxItems }) },
  components: item.components,
  read: (value, path, issues) => {
    if (!Array.isArray(value)) return fail(issues, path, "must be an array");
    if (maxItems !== undefined && value.length > maxItems)
      return fail(issues, path, `must have at most ${maxItems} items`);
    const before = issues.errors.length;
    // Array.from, not map: a sparse array's holes read as undefined, which is "must be …".
    const items = Array.from(value, (raw, i) => item.read(raw, fieldPath(path, i), issues));
    return issues.errors.length === before && items.every((v) => v !== undefined) ? (items as T[]) : undefined;
  },
});

export interface Fields<T extends Table = Table> {
  path(key: string): string;
  /** Whether the caller gave the field at all (null counts as not given). */
  has(key: string): boolean;
  /** The field as its table describes it: checked, with its default when absent or refused. */
  read<K extends keyof T & string>(key: K): ValueOf<T[K]>;
  /** A field outside the table, read with `kind`. */
  readAs<V>(key: string, kind: Kind<V>, required?: boolean): V | undefined;
  fail(key: string, message: string): undefined;
  issues: Issues;
}

export function fieldsOf<T extends Table>(source: JsonObject, path: string, issues: Issues, table?: T): Fields<T> {
  const given = (key: string): boolean => own(source, key) !== undefined;
  const fail = (key: string, message: string): undefined => {
    issues.errors.push(`${fieldPath(path, key)}: ${message}`);
    return undefined;
  };
  const readAs = <V>(key: string, kind: Kind<V>, required?: boolean): V | undefined => {
    if (!given(key)) return required ? fail(key, "is required") : undefined;
    return kind.read(own(source, key), fieldPath(path, key), issues);
  };
  return {
    path: (key) => fieldPath(path, key),
    has: given,
    fail,
    readAs,
    issues,
    read: (key) => {
      const field = table?.[key];
      if (!field) throw new Error(`${key} is not in the table`);
      return (readAs(key, field.kind, field.required) ?? field.default) as ValueOf<T[typeof key]>;
    },
  };
}

/** A table's JSON Schema: its fields as properties, in reading order, documented. */
export function tableSchema(table: Table, description?: string): JsonSchema {
  const required = Object.keys(table).filter((key) => table[key].required);
  const properties = Object.fromEntries(
    Object.entries(table).map(([key, field]) => [
      key,
      {
        ...field.kind.schema,
        ...(field.description !== undefined && { description: field.description }),
        ...(field.default !== undefined && { default: field.default }),
        ...(field.example !== undefined && { example: field.example }),
      },
    ]),
  );
  return {
    type: "object",
    properties,
    ...(required.length > 0 && { required }),
    ...(description !== undefined && { description }),
  };
}

/**
 * A table's schema as the document embeds it (a `$ref` when named) with the named schemas it
 * needs, its own among them.
 */
export function tableComponent(
  table: Table,
  doc: { name?: string; description?: string; example?: unknown } = {},
): Pick<Kind<unknown>, "schema" | "components"> {
  const definition = {
    ...tableSchema(table, doc.description),
    ...(doc.example !== undefined && { example: doc.example }),
  };
  const inner = componentsOf(Object.values(table).map((field) => field.kind));
  return doc.name
    ? { schema: { $ref: `#/components/schemas/${doc.name}` }, components: { ...inner, [doc.name]: definition } }
    : { schema: definition, components: inner };
}

/**
 * An object read by its table: `build` reads the fields (in the order errors should come) and
 * puts the value together. Named, it is a component of the OpenAPI document and a `$ref` inside.
 */
export function object<T, F extends Table>(
  table: F,
  build: (f: Fields<F>) => T | undefined,
  doc: { name?: string; description?: string } = {},
): Kind<T> {
  return {
    ...tableComponent(table, doc),
    read: (value, path, issues) =>
      isObject(value) ? build(fieldsOf(value, path, issues, table)) : fail(issues, path, "must be an object"),
  };
}
