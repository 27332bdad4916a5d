import { describe, expect, it } from 'vitest';
import { decodeLenient, parseQueryString } from './query.js';

describe('parseQueryString', () => {
  it('gives repeated names as arrays, in order', () => {
    expect(parseQueryString('a=1&b=2&a=3&a=4')).toEqual({ a: ['1', '3', '4'], b: '2' });
  });
  it('reads + as a space and percent-decodes names and values', () => {
    expect(parseQueryString('q=hello+world&na%6De=%C3%A9t%C3%A9')).toEqual({ q: 'hello world', name: 'été' });
    expect(parseQueryString('x=a%2Bb')).toEqual({ x: 'a+b' });
  });
  it('keeps bracket names as written and tolerates a leading ?', () => {
    expect(parseQueryString('?expand[]=customer&expand[]=source')).toEqual({ 'expand[]': ['customer', 'source'] });
    expect(parseQueryString('expand%5B%5D=x')).toEqual({ 'expand[]': 'x' });
  });
  it('keeps malformed escapes literal instead of throwing', () => {
    expect(parseQueryString('a=%zz&b=100%&c=%E2%82&d=%41%zz')).toEqual({ a: '%zz', b: '100%', c: '%E2%82', d: 'A%zz' });
  });
  it('takes a name without = as empty and skips empty pieces', () => {
    expect(parseQueryString('flag&&x=1&=v')).toEqual({ flag: '', x: '1', '': 'v' });
    expect(parseQueryString('')).toEqual({});
  });
  it('stores __proto__ as an own key without touching the prototype', () => {
    const q = parseQueryString('__proto__=x&__proto__=y&constructor=z');
    expect(Object.getPrototypeOf(q)).toBe(Object.prototype);
    expect(Object.keys(q)).toEqual(['__proto__', 'constructor']);
    expect(Object.getOwnPropertyDescriptor(q, '__proto__')?.value).toEqual(['x', 'y']);
    expect(({} as Record<string, unknown>)['x']).toBeUndefined();
  });
});

/** decodeLenient as it was, with decodeURIComponent and one exception per bad escape: the oracle. */
function decodeByExceptions(text: string): string {
  if (text.indexOf('%') === -1) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
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
    });
  }
}

describe('decodeLenient', () => {
  it('decodes the good runs around a bad one', () => {
    expect(decodeLenient('%41%E2%82 %42')).toBe('A%E2%82 B');
  });

  it('decodes as decodeURIComponent does, sequence by sequence, on any run of escapes', () => {
    const edges = ['00', '41', '7F', '80', 'BF', 'C0', 'C1', 'C2', 'DF', 'E0', 'A0', '9F', 'ED', 'EF', 'F0', '90', '8F', 'F4', 'F5', 'F7', 'F8', 'FF', 'e2', 'Ac'];
    let seed = 7;
    const next = (k: number): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % k;
    for (let t = 0; t < 20_000; t++) {
      const parts: string[] = [];
      for (let i = 0, len = 1 + next(8); i < len; i++) {
        const r = next(10);
        parts.push(r < 6 ? `%${edges[next(edges.length)]}` : r < 8 ? `%${next(256).toString(16).padStart(2, '0')}` : r < 9 ? 'a' : '%z');
      }
      const text = parts.join('');
      expect(decodeLenient(text), text).toBe(decodeByExceptions(text));
    }
    // Valid text of every width, and a surrogate that must stay escaped.
    expect(decodeLenient('%F0%9F%98%80%C3%A9%E2%82%AC%ED%A0%80')).toBe('😀é€%ED%A0%80');
  });

  it('decodes a body of a million bad escapes in one pass', () => {
    expect(decodeLenient('%80'.repeat(1_000_000))).toHaveLength(3_000_000);
  });
});
