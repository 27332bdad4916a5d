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

describe('decodeLenient', () => {
  it('decodes the good runs around a bad one', () => {
    expect(decodeLenient('%41%E2%82 %42')).toBe('A%E2%82 B');
  });
});
