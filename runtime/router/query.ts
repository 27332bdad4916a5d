/**
 * Query strings and percent-decoding for the host-side router. Request lines come from
 * anyone, so nothing here throws on malformed input.
 */

const ESCAPE_RUN = /(?:%[0-9A-Fa-f]{2})+/g;
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

/**
 * Percent-decodes `text` without ever throwing: a malformed escape (`%zz`, a truncated
 * UTF-8 sequence such as `%E2%82`) stays as written.
 */
export function decodeLenient(text: string): string {
  if (text.indexOf('%') === -1) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    // Decode each run of escapes on its own, character by character, so one bad
    // sequence stays literal and everything around it is still decoded.
    return text.replace(ESCAPE_RUN, decodeRun);
  }
}

/** The value of one hex digit's character code (the run's digits are all hex). */
function hexValue(c: number): number {
  return c <= 57 ? c - 48 : (c | 32) - 87;
}

/**
 * Decodes a run of `%XX` escapes as UTF-8, as `decodeURIComponent` would each well-formed
 * sequence (no overlong forms, surrogates or code points past U+10FFFF); an escape that does
 * not start one stays as written. By hand, not one thrown exception per bad escape: a body of
 * 1.8 MB of `%80` took 1.5 s that way.
 */
function decodeRun(run: string): string {
  const n = run.length / 3;
  const bytes = new Uint8Array(n);
  for (let k = 0; k < n; k++) bytes[k] = (hexValue(run.charCodeAt(3 * k + 1)) << 4) | hexValue(run.charCodeAt(3 * k + 2));
  const out: string[] = [];
  let k = 0;
  while (k < n) {
    const b = bytes[k] as number;
    if (b < 0x80) {
      out.push(String.fromCharCode(b));
      k++;
      continue;
    }
    // The sequence's width and the range its second byte must fall in.
    let width = 0, low = 0x80, high = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) width = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      width = 3;
      if (b === 0xe0) low = 0xa0;
      else if (b === 0xed) high = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      width = 4;
      if (b === 0xf0) low = 0x90;
      else if (b === 0xf4) high = 0x8f;
    }
    let ok = width > 0 && k + width <= n;
    for (let j = 1; ok && j < width; j++) {
      const c = bytes[k + j] as number;
      ok = j === 1 ? c >= low && c <= high : c >= 0x80 && c <= 0xbf;
    }
    if (!ok) {
      out.push(run.slice(3 * k, 3 * k + 3));
      k++;
      continue;
    }
    let cp = b & (width === 2 ? 0x1f : width === 3 ? 0x0f : 0x07);
    for (let j = 1; j < width; j++) cp = (cp << 6) | ((bytes[k + j] as number) & 0x3f);
    out.push(String.fromCodePoint(cp));
    k += width;
  }
  return out.join('');
}

/** Percent-decodes `text`, or answers null when an escape is malformed. */
export function decodeStrict(text: string): string | null {
  if (text.indexOf('%') === -1) return text;
  // Most malformed escapes are caught here, without the cost of a thrown exception.
  if (BAD_ESCAPE.test(text)) return null;
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/**
 * Sets `key` on a plain object as an own, enumerable property. A plain assignment to
 * `__proto__` would replace the prototype instead of storing the value.
 */
export function setOwn<V>(target: Record<string, V>, key: string, value: V): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** Own property lookup: never answers an inherited member such as `constructor`. */
export function getOwn(target: unknown, key: string): unknown {
  if (target === null || typeof target !== 'object') return undefined;
  return Object.prototype.hasOwnProperty.call(target, key) ? (target as Record<string, unknown>)[key] : undefined;
}

/**
 * Parses a raw query string (without `?`). A repeated name gives an array in order of
 * appearance, `+` is a space, percent-decoding never throws (a malformed escape stays
 * literal), a name without `=` has the value `''`, and empty pieces (`a=1&&b=2`) are skipped.
 * Bracket names stay as written (`expand[]`).
 *
 * @example parseQueryString('a=1&a=2&b=x+y') // { a: ['1', '2'], b: 'x y' }
 */
export function parseQueryString(q: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (q.length === 0) return out;
  const text = q.charCodeAt(0) === 63 /* ? */ ? q.slice(1) : q;
  for (const piece of text.split('&')) {
    if (piece.length === 0) continue;
    const eq = piece.indexOf('=');
    const rawName = eq === -1 ? piece : piece.slice(0, eq);
    const rawValue = eq === -1 ? '' : piece.slice(eq + 1);
    const name = decodeLenient(rawName.replace(/\+/g, ' '));
    const value = decodeLenient(rawValue.replace(/\+/g, ' '));
    const prior = getOwn(out, name) as string | string[] | undefined;
    if (prior === undefined) setOwn(out, name, value);
    else if (Array.isArray(prior)) prior.push(value);
    else setOwn(out, name, [prior, value]);
  }
  return out;
}
