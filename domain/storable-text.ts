/**
 * Postgres `text` and `jsonb` cannot hold U+0000 or an unpaired UTF-16 surrogate, though JSON
 * can carry both as escapes ("\u0000", "\ud800"). Every client string the service stores is
 * checked here first, so such input is a 400 (or an EDL error) naming the field instead of a
 * failed insert.
 */
import { fieldPath } from "./edl/fields";

export const UNSTORABLE_TEXT_MESSAGE = "must not contain NUL (\\u0000) or unpaired surrogate characters";

/** One is enough to refuse the input and a few help to fix it; a body full of them must not make a huge answer. */
export const MAX_UNSTORABLE_PATHS = 20;

// biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is a character Postgres cannot store: finding it is the point.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A container being walked: the next of its keys (objects) or indexes (arrays) to look at. */
interface Frame {
  path: string;
  container: Record<string, unknown> | unknown[];
  keys: string[] | null;
  next: number;
}

/**
 * Paths (`a.b[0].c`; `""` for the value itself) of the keys and string values holding such
 * text, in document order, at most `limit` of them.
 */
export function unstorableTextPaths(value: unknown, limit = MAX_UNSTORABLE_PATHS): string[] {
  return pathsWhere(
    value,
    limit,
    (item) => typeof item === "string" && UNSTORABLE.test(item),
    (key) => UNSTORABLE.test(key),
  );
}

export const NON_FINITE_NUMBER_MESSAGE =
  "must be a number within the range JSON numbers are read in (1e400 reads as Infinity)";

/**
 * Paths of numbers too large to be read as one (JSON.parse makes 1e400 Infinity, and storing it
 * as JSON turns it into null without a word), at most `limit` of them.
 */
export function nonFiniteNumberPaths(value: unknown, limit = MAX_UNSTORABLE_PATHS): string[] {
  return pathsWhere(
    value,
    limit,
    (item) => typeof item === "number" && !Number.isFinite(item),
    () => false,
  );
}

/**
 * Paths of the values `isBad` picks and of the keys `isBadKey` picks (the field is refused
 * whatever its value). Walked with a stack of its own, so no nesting depth overflows the call
 * stack; a path is built only for what is reported or descended into, so a body of a million
 * empty objects costs no strings.
 */
function pathsWhere(
  value: unknown,
  limit: number,
  isBad: (item: unknown) => boolean,
  isBadKey: (key: string) => boolean,
): string[] {
  const found: string[] = [];
  const frames: Frame[] = [];
  const visit = (item: unknown, path: () => string) => {
    if (isBad(item)) {
      found.push(path());
    } else if (typeof item === "object" && item !== null) {
      const keys = Array.isArray(item) ? null : Object.keys(item);
      if ((keys ?? (item as unknown[])).length > 0)
        frames.push({ path: path(), container: item as Frame["container"], keys, next: 0 });
    }
  };
  visit(value, () => "");
  while (frames.length > 0 && found.length < limit) {
    const frame = frames[frames.length - 1];
    const { keys, container } = frame;
    if (frame.next === (keys ?? (container as unknown[])).length) {
      frames.pop();
      continue;
    }
    const i = frame.next++;
    if (keys === null) {
      visit((container as unknown[])[i], () => fieldPath(frame.path, i));
    } else if (isBadKey(keys[i])) {
      found.push(fieldPath(frame.path, keys[i]));
    } else {
      visit((container as Record<string, unknown>)[keys[i]], () => fieldPath(frame.path, keys[i]));
    }
  }
  return found;
}
