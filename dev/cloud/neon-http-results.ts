import type { FieldDef } from "pg";

/** A value as Postgres prints it in text format, or SQL NULL. */
export type Cell = string | null;

export interface StatementResult {
  fields: FieldDef[];
  rows: Cell[][];
  command: string;
  rowCount: number | null;
}

export interface OutputMode {
  arrayMode: boolean;
  /** Values stay Postgres's text, as the driver asks; otherwise they become JSON by type. */
  rawTextOutput: boolean;
  /** Array type OID → its element type OID (0: not an array); only read without raw text. */
  elementTypes: ReadonlyMap<number, number>;
}

const OID = { bool: 16, int2: 21, int4: 23, float4: 700, float8: 701, json: 114, jsonb: 3802 } as const;

/**
 * One text value as JSON the way Neon converts it without raw text output: booleans, 16- and
 * 32-bit integers and finite floats as JSON scalars, json and jsonb as they are, arrays as
 * lists; everything else (bigint, numeric, timestamps…) stays a string.
 */
function textToJson(text: string, type: number, elementTypes: ReadonlyMap<number, number>): string {
  const element = elementTypes.get(type);
  if (element) return arrayToJson(text, element, elementTypes);
  switch (type) {
    case OID.bool:
      return text === "t" ? "true" : "false";
    case OID.int2:
    case OID.int4:
      return String(Number.parseInt(text, 10));
    case OID.float4:
    case OID.float8: {
      const n = Number(text);
      // NaN and ±Infinity have no JSON number; Neon keeps them as strings.
      return Number.isFinite(n) ? JSON.stringify(n) : JSON.stringify(text);
    }
    case OID.json:
    case OID.jsonb:
      return text;
    default:
      return JSON.stringify(text);
  }
}

/** Postgres's array output (`{a,"b c",NULL,{1,2}}`, optionally `[1:2]=` bounds first) as a JSON list. */
function arrayToJson(text: string, element: number, elementTypes: ReadonlyMap<number, number>): string {
  const s = text.startsWith("[") ? text.slice(text.indexOf("=") + 1) : text;
  let i = 0;
  const fail = (): never => {
    throw new Error(`could not parse postgres array: ${text}`);
  };
  const skipSpace = () => {
    while (i < s.length && /\s/.test(s[i])) i++;
  };
  const quoted = (): string => {
    let out = "";
    for (i++; ; ) {
      if (i >= s.length) fail();
      const c = s[i++];
      if (c === '"') return out;
      out += c === "\\" ? (s[i++] ?? fail()) : c;
    }
  };
  const item = (): string => {
    if (s[i] === "{") return list();
    if (s[i] === '"') return textToJson(quoted(), element, elementTypes);
    const start = i;
    while (i < s.length && s[i] !== "," && s[i] !== "}") i++;
    const bare = s.slice(start, i).trimEnd();
    return bare === "NULL" ? "null" : textToJson(bare, element, elementTypes);
  };
  const list = (): string => {
    if (s[i] !== "{") fail();
    i++;
    skipSpace();
    const items: string[] = [];
    if (s[i] === "}") {
      i++;
      return "[]";
    }
    for (;;) {
      skipSpace();
      items.push(item());
      skipSpace();
      const c = s[i++];
      if (c === "}") return `[${items.join(",")}]`;
      if (c !== ",") fail();
    }
  };
  skipSpace();
  const json = list();
  skipSpace();
  if (i !== s.length) fail();
  return json;
}

/** One statement's answer: `{fields, command, rowCount, rowAsArray, rows}`, as Neon writes it. */
export function statementJson(result: StatementResult, mode: OutputMode): string {
  const fields = result.fields.map((f) => ({
    name: f.name,
    dataTypeID: f.dataTypeID,
    tableID: f.tableID,
    columnID: f.columnID,
    dataTypeSize: f.dataTypeSize,
    dataTypeModifier: f.dataTypeModifier,
    format: "text",
  }));
  const types = result.fields.map((f) => f.dataTypeID);
  const value = (cell: Cell, i: number) =>
    cell === null ? "null" : mode.rawTextOutput ? JSON.stringify(cell) : textToJson(cell, types[i], mode.elementTypes);
  const names = result.fields.map((f) => JSON.stringify(f.name));
  // Written by hand rather than through an object so that, as with Neon, a repeated column name
  // is repeated in the row instead of silently merged.
  const row = mode.arrayMode
    ? (cells: Cell[]) => `[${cells.map(value).join(",")}]`
    : (cells: Cell[]) => `{${cells.map((c, i) => `${names[i]}:${value(c, i)}`).join(",")}}`;
  return (
    `{"fields":${JSON.stringify(fields)},"command":${JSON.stringify(result.command)},` +
    `"rowCount":${JSON.stringify(result.rowCount)},"rowAsArray":${mode.arrayMode},"rows":[${result.rows.map(row).join(",")}]}`
  );
}

const DB_ERROR_FIELDS = [
  "code",
  "detail",
  "hint",
  "position",
  "internalPosition",
  "internalQuery",
  "severity",
  "where",
  "table",
  "column",
  "schema",
  "dataType",
  "constraint",
  "file",
  "line",
  "routine",
] as const;

export type DbErrorFields = Partial<Record<(typeof DB_ERROR_FIELDS)[number], string>>;

/**
 * Neon's error body: the message and every field of Postgres's error, `null` where absent
 * (`code` and `severity` are empty strings for errors that did not come from Postgres).
 */
export function errorJson(message: string, db: DbErrorFields = {}): string {
  const body: Record<string, string | null> = { message };
  for (const key of DB_ERROR_FIELDS) body[key] = db[key] ?? (key === "code" || key === "severity" ? "" : null);
  return JSON.stringify(body);
}
