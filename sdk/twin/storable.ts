/**
 * What a record id or type (and every other part of a storage key) may hold. Pure: the
 * runtime's storage and the world engine use it, and twins running in the sandbox too.
 *
 * LMDB's key encoding (ordered-binary 1.6.3) writes a string of 64 or more UTF-16 units as
 * bare UTF-8, so U+0000–U+0004 in it collide with the separator between key parts and with
 * the escapes of shorter strings, and a lone surrogate becomes U+FFFD. A part of 63 units is
 * held to the same rule, because the bound "just after it" that a walk uses is one unit
 * longer (runtime/store/keys.ts, `partAfter`). A lone surrogate is refused at any length:
 * LMDB and code-point order place it differently.
 */

/** From this many UTF-16 units on, an id holds no U+0000–U+0004. */
export const LONG_ID_UNITS = 63;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const CONTROL_OR_LONE = new RegExp(`[\\u0000-\\u0004]|${LONE_SURROGATE.source}`, 'g');
const LONE_ONLY = new RegExp(LONE_SURROGATE.source, 'g');

/** Whether `text` can be a record id or type (length limits aside): the rule above. */
export function storableId(text: string): boolean {
  return storableAs(text, text.length >= LONG_ID_UNITS);
}

function storableAs(text: string, long: boolean): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 4) {
      if (long) return false;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      // A high surrogate followed by a low one is a pair; anything else is alone.
      const next = text.charCodeAt(i + 1);
      if (c >= 0xdc00 || !(next >= 0xdc00 && next <= 0xdfff)) return false;
      i++;
    }
  }
  return true;
}

/**
 * `text` with what the rule above refuses replaced by U+FFFD, for a twin that files outside
 * input (a metadata value, an email) into ids: `length` is the length of the longest id or
 * bound the text goes into, which decides whether U+0000–U+0004 may stay.
 */
export function toStorableId(text: string, length = text.length): string {
  const long = length >= LONG_ID_UNITS;
  return storableAs(text, long) ? text : text.replace(long ? CONTROL_OR_LONE : LONE_ONLY, '\uFFFD');
}
