/**
 * Limits on the shape of a JSON body, checked on the text before it is parsed. The byte limit
 * alone does not bound the work: 4 MiB of `[{},{},…]` parses into 1.4 million objects, most of a
 * Worker's 128 MiB of heap (docs/security.md#request-bodies), and 100,000 levels of `[[[…]]]`
 * parse fine but overflow the stack of anything that then walks the value recursively.
 */

/** A timeline is 7 levels deep; caller metadata is free-form, but no real object needs 64. */
export const MAX_JSON_DEPTH = 64;

/**
 * Arrays and objects in one body: parsing turns the two bytes of `{}` into tens of bytes of
 * heap, far more than any scalar costs over its text. The largest Enterprise timeline (1,000
 * clips with every field set) has about 6,000; a timeline of 100,000 clips still parses, so the
 * plan limits refuse it by its count, naming the limit.
 */
export const MAX_JSON_CONTAINERS = 200_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Why `text` is refused before parsing (as the end of a sentence, "nests deeper than …"), or
 * null. One pass over the characters, skipping strings; it does not check that the text is
 * JSON, which JSON.parse does next.
 */
export function jsonShapeProblem(
  text: string,
  maxDepth = MAX_JSON_DEPTH,
  maxContainers = MAX_JSON_CONTAINERS,
): string | null {
  let depth = 0;
  let containers = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return `nests deeper than ${maxDepth} levels`;
      if (++containers > maxContainers) return `holds more than ${maxContainers} arrays and objects`;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return null;
}
