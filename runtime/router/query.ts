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

function decodeRun(run: string): string {
  try {
    return decodeURIComponent(run);
  } catch {
    let out = '';
    let i = 0;
    while (i < run.length) {
      const lead = parseInt(run.slice(i + 1, i + 3), 16);
      const width = lead < 0x80 ? 1 : lead >= 0xf0 && lead <= 0xf7 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      try {
        out += decodeURIComponent(run.slice(i, i + 3 * width));
        i += 3 * width;
      } catch {
        out += run.slice(i, i + 3);
        i += 3;
      }
    }
    return out;
  }
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
