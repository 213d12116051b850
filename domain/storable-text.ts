/**
 * Postgres `text` and `jsonb` cannot hold U+0000 or an unpaired UTF-16 surrogate, though JSON
 * can carry both as escapes ("\u0000", "\ud800"). Every client string the service stores is
 * checked here first, so such input is a 400 (or an EDL error) naming the field instead of a
 * failed insert.
 */
import { fieldPath } from "./edl/fields";

export const UNSTORABLE_TEXT_MESSAGE = "must not contain NUL (\\u0000) or unpaired surrogate characters";

const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Paths (`a.b[0].c`; `""` for the value itself) of every key or string value holding such text. */
export function unstorableTextPaths(value: unknown, path = ""): string[] {
  if (typeof value === "string") return UNSTORABLE.test(value) ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => unstorableTextPaths(item, fieldPath(path, i)));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const here = fieldPath(path, key);
    return UNSTORABLE.test(key) ? [here] : unstorableTextPaths(item, here);
  });
}
