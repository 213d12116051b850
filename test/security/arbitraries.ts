/**
 * Hostile input for the fuzzing campaign: JSON written as text (so keys can repeat and be named
 * `__proto__`), strings with NUL, lone surrogates and odd unicode, numbers JavaScript cannot
 * hold, broken and deeply nested documents, invalid UTF-8, query strings and path segments with
 * malformed escapes, and header values of any Latin-1 byte.
 */
import fc from "fast-check";

/** A JSON value as text, built from parts so nothing normalises it on the way out. */
export type JsonText = string;

export const PROTOTYPE_KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "valueOf",
  "hasOwnProperty",
  "__defineGetter__",
  "isPrototypeOf",
];

const ODD_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff",
  "\udfff\ud800",
  "\ufeff",
  "\u202e\u202d",
  "\u2028\u2029",
  "e\u0301\u0301\u0301",
  "👩‍👩‍👧‍👦",
  "\uffff",
  "%00",
  "%",
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "' OR '1'='1' --",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a Log4Shell lookup string, sent as it is.
  "${jndi:ldap://x.test/a}",
  "NaN",
  "Infinity",
  "-0",
  "1e308",
  "null",
  "undefined",
  "true",
  ...PROTOTYPE_KEYS,
];

/** Strings a careless parser, database or log line would trip on; short enough for a URL or header. */
export const shortHostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.string({ unit: "binary", maxLength: 40 }), weight: 4 },
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }), weight: 2 },
  { arbitrary: fc.constantFrom(...ODD_STRINGS), weight: 4 },
);

/** The same, and long ones: a few KB to a few hundred KB, inside the body limits. */
const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: shortHostileString, weight: 10 },
  {
    arbitrary: fc
      .tuple(fc.string({ minLength: 1, maxLength: 4 }), fc.integer({ min: 1_000, max: 60_000 }))
      .map(([s, n]) => s.repeat(n)),
    weight: 1,
  },
);

/** Numbers as JSON text, including what a double cannot hold (1e400 parses to Infinity). */
const numberText: fc.Arbitrary<JsonText> = fc.oneof(
  fc.constantFrom(
    "1e308",
    "-1e308",
    "1e309",
    "-1e400",
    "-0",
    "-0.0",
    "0",
    "5e-324",
    "1e-400",
    "9007199254740993",
    "123456789012345678901234567890",
    "0.1",
    "-1",
    "1.5",
    "2",
    "1E2",
    "1e+2",
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.integer().map(String),
);

const stringText = (s: fc.Arbitrary<string>): fc.Arbitrary<JsonText> => s.map((v) => JSON.stringify(v));

/** Escapes JSON allows but Postgres text cannot store, written as escapes. */
const escapeText = fc.constantFrom('"\\u0000"', '"\\ud800"', '"a\\udc00b"', '"\\udfff\\ud800"', '"\\u0000\\u0000"');

const scalarText: fc.Arbitrary<JsonText> = fc.oneof(
  numberText,
  stringText(hostileString),
  escapeText,
  fc.constantFrom("true", "false", "null"),
);

export const hostileKey: fc.Arbitrary<string> = fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), hostileString);

export const objectText = (entries: fc.Arbitrary<[string, JsonText][]>): fc.Arbitrary<JsonText> =>
  entries.map((list) => `{${list.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`);

/**
 * A request body: each named field maybe missing (present `freq` times in `freq + 1`) or wrong, as
 * its arbitrary makes it, then `extra` fields (unknown, hostile, repeated), all in any order.
 */
export function documentOf(
  fields: Record<string, { arbitrary: fc.Arbitrary<JsonText>; freq: number }>,
  extra: fc.Arbitrary<[string, JsonText]>,
): fc.Arbitrary<JsonText> {
  const names = Object.keys(fields);
  return objectText(
    fc
      .tuple(
        fc.tuple(
          ...names.map((name) => fc.option(fields[name].arbitrary, { freq: fields[name].freq, nil: undefined })),
        ),
        fc.array(extra, { maxLength: 3 }),
      )
      .chain(([values, extras]) => {
        const entries: [string, JsonText][] = [
          ...names.flatMap((name, i): [string, JsonText][] => (values[i] === undefined ? [] : [[name, values[i]]])),
          ...extras,
        ];
        return fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length });
      }),
  );
}

/** Any JSON value, shallow: objects with hostile (and repeated) keys, arrays, odd scalars. */
export const jsonText: fc.Arbitrary<JsonText> = fc.letrec<{ value: JsonText; array: JsonText; object: JsonText }>(
  (tie) => ({
    value: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalarText, tie("array"), tie("object")),
    array: fc.array(tie("value"), { maxLength: 5 }).map((items) => `[${items.join(",")}]`),
    object: objectText(fc.array(fc.tuple(hostileKey, tie("value")), { maxLength: 5 })),
  }),
).value;

/** Nesting far past any real document: arrays, objects, or both, up to 100k levels. */
const deeplyNested: fc.Arbitrary<JsonText> = fc
  .tuple(fc.integer({ min: 65, max: 100_000 }), fc.constantFrom(["[", "]"], ['{"a":', "}"], ['[{"a":', "}]"]))
  .map(([depth, [open, close]]) => `${open.repeat(depth)}1${close.repeat(depth)}`);

/** A document broken on the way: cut short, spliced, wrapped or replaced by non-JSON. */
const brokenText = (document: fc.Arbitrary<JsonText>): fc.Arbitrary<string> =>
  fc.oneof(
    fc.tuple(document, fc.nat()).map(([text, at]) => text.slice(0, text.length ? at % text.length : 0)),
    fc.tuple(document, fc.nat(), fc.string({ unit: "binary", minLength: 1, maxLength: 4 })).map(([text, at, junk]) => {
      const i = text.length ? at % text.length : 0;
      return text.slice(0, i) + junk + text.slice(i);
    }),
    document.map((text) => `\ufeff${text}`),
    document.map((text) => `${text}${text}`),
    fc.constantFrom(
      "",
      " ",
      "undefined",
      "NaN",
      "{'a':1}",
      "[1,]",
      '{"a":1,}',
      '{"a" 1}',
      "{}garbage",
      "\u0000",
      "1".repeat(400),
      '"unterminated',
    ),
  );

/** Bytes that are not UTF-8 (overlong forms, CESU-8 surrogates, stray continuations) around JSON. */
const invalidUtf8 = (document: fc.Arbitrary<JsonText>): fc.Arbitrary<Buffer> =>
  fc
    .tuple(
      document,
      fc.nat(),
      fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x00]),
    )
    .map(([text, at, bytes]) => {
      const raw = Buffer.from(text, "utf8");
      const i = raw.length ? at % raw.length : 0;
      return Buffer.concat([raw.subarray(0, i), Buffer.from(bytes), raw.subarray(i)]);
    });

/** A body: text (sent as UTF-8, lone surrogates becoming U+FFFD) or raw bytes. */
export type Body = string | Buffer;

/**
 * What the Worker parses out of the bytes sent, or undefined when they are not JSON: a string goes
 * out as UTF-8, its lone surrogates as U+FFFD.
 */
export function parsedAsSent(body: Body): unknown {
  try {
    return JSON.parse(
      Buffer.isBuffer(body) ? new TextDecoder().decode(body) : Buffer.from(body, "utf8").toString("utf8"),
    );
  } catch {
    return undefined;
  }
}

/**
 * Any request body within `maxBytes`: well-formed JSON, broken JSON, deep nesting or invalid
 * UTF-8. Bodies over a route's limit are body-limits.test.ts's.
 */
export const anyBody = (document: fc.Arbitrary<JsonText>, maxBytes: number): fc.Arbitrary<Body> =>
  fc
    .oneof(
      { arbitrary: document, weight: 8 },
      { arbitrary: jsonText, weight: 2 },
      { arbitrary: brokenText(document), weight: 2 },
      { arbitrary: deeplyNested, weight: 1 },
      { arbitrary: invalidUtf8(document), weight: 1 },
    )
    .filter((body) => Buffer.byteLength(body) <= maxBytes);

/** A Latin-1 header value as node:http puts it on the wire (HTTP forbids CR, LF and NUL). */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    maxLength: 60,
  }),
  shortHostileString.map((s) =>
    Buffer.from(s, "utf8")
      .toString("latin1")
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters HTTP refuses in a header (all but tab) are taken out.
      .replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, ""),
  ),
);

export const contentType: fc.Arbitrary<string | undefined> = fc.option(
  fc.oneof(
    fc.constantFrom(
      "application/json",
      "application/json; charset=utf-8",
      "application/json; charset=utf-16",
      "APPLICATION/JSON",
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=xyz",
      "application/octet-stream",
      "application/json, text/plain",
      "",
    ),
    headerValue,
  ),
  { nil: undefined },
);

/** Extra headers a client might send, valid or not: Idempotency-Key, forwarding, encodings. */
export const extraHeaders: fc.Arbitrary<Record<string, string>> = fc
  .record(
    {
      "Idempotency-Key": fc.oneof(
        fc.string({ minLength: 1, maxLength: 40 }).map((s) => s.replace(/[^\x21-\x7e]/g, "k")),
        headerValue,
        fc.constantFrom("", "x".repeat(255), "x".repeat(256), "y".repeat(4000)),
      ),
      Accept: fc.oneof(fc.constantFrom("application/json", "*/*", "text/html", "application/xml"), headerValue),
      "Accept-Encoding": fc.constantFrom("gzip", "br", "identity", "*", "gzip;q=0, deflate"),
      "X-Forwarded-For": fc.constantFrom("127.0.0.1", "10.0.0.1", "::1", "1.2.3.4, 5.6.7.8"),
      "X-Forwarded-Host": headerValue,
      "X-HTTP-Method-Override": fc.constantFrom("DELETE", "PUT", "GET", "PATCH"),
      Origin: fc.constantFrom("https://evil.example", "null"),
      "Content-Encoding": fc.constantFrom("gzip", "br", "identity", "deflate"),
    },
    { requiredKeys: [] },
  )
  .chain((headers) =>
    fc
      .dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), headerValue, { maxKeys: 3 })
      .map((more) => ({ ...more, ...headers })),
  );

/** The bytes of `text` (UTF-8) percent-encoded, leaving unreserved characters as they are. */
function percentEncode(text: string): string {
  return [...Buffer.from(text, "utf8")]
    .map((b) =>
      /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");
}

/** Escapes that decode to nothing valid: stray %, bad hex, overlong and surrogate UTF-8, NUL. */
const BROKEN_ESCAPES = [
  "%",
  "%%",
  "%zz",
  "%4",
  "%ED%A0%80",
  "%C0%AF",
  "%FF",
  "%00",
  "%E0%A4%A",
  "+",
  "%2F",
  "%2e%2e",
  "%u0041",
];

/** A query or path component: percent-encoded text, raw characters, or broken escapes. */
const urlComponent: fc.Arbitrary<string> = fc.oneof(
  shortHostileString.map(percentEncode),
  fc.stringMatching(/^[A-Za-z0-9\-._~!$'()*,;:@]{0,12}$/),
  fc
    .array(fc.oneof(fc.constantFrom(...BROKEN_ESCAPES), fc.stringMatching(/^[a-z0-9]{0,3}$/)), {
      minLength: 1,
      maxLength: 4,
    })
    .map((parts) => parts.join("")),
);

/** Values the list's numbers and filters might be given. */
const queryValue = fc.oneof(
  fc.constantFrom(
    "0",
    "-1",
    "1",
    "2",
    "1.5",
    "1e3",
    "99999999999999999999999",
    "0x10",
    "+5",
    "%203",
    "NaN",
    "Infinity",
    "",
    "00001",
    "%D9%A1",
    "100",
    "101",
    "1000000001",
  ),
  fc.constantFrom("queued", "processing", "completed", "failed", "cancelled", "mp4_264_720p", "edl_custom", "QUEUED"),
  urlComponent,
);

const queryKey = fc.oneof(
  { arbitrary: fc.constantFrom("page", "limit", "status", "preset"), weight: 4 },
  {
    arbitrary: fc.constantFrom("page[]", "limit[0]", "__proto__", "constructor", "accountId", "account_id", "PAGE"),
    weight: 1,
  },
  { arbitrary: urlComponent, weight: 1 },
);

/** A query string with repeated keys, empty pairs, odd separators and broken escapes ("" or "?…"). */
export const queryString: fc.Arbitrary<string> = fc
  .tuple(
    fc.array(fc.tuple(queryKey, fc.option(queryValue, { nil: undefined })), { maxLength: 6 }),
    fc.constantFrom("&", "&&", ";", "&amp;"),
  )
  .map(([pairs, separator]) =>
    pairs.length ? `?${pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join(separator)}` : "",
  );

/** A path segment where a job id goes: UUIDs of every version and case, near-misses and junk. */
export const pathId = (ownIds: string[]): fc.Arbitrary<string> =>
  fc.oneof(
    fc.uuid(),
    fc.uuid().map((id) => id.toUpperCase()),
    fc.uuid().map((id) => `{${id}}`),
    fc.uuid().map((id) => id.replace(/-/g, "")),
    fc.uuid().map((id) => `${id}%00`),
    fc.uuid().map((id) => `${id}.json`),
    fc.constantFrom(
      "00000000-0000-0000-0000-000000000000",
      "ffffffff-ffff-ffff-ffff-ffffffffffff",
      "..",
      ".",
      "%2e%2e",
      "null",
      "undefined",
      "0",
      "-1",
      "%20",
      "~",
      "*",
    ),
    ...(ownIds.length ? [fc.constantFrom(...ownIds)] : []),
    urlComponent.filter((s) => s.length > 0 && !s.includes("/") && !s.includes("?") && !s.includes("#")),
  );
