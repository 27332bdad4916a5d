/**
 * jsonCopy where code generation is refused (workerd refuses `new Function` inside a request):
 * the same copies, made without compiling a maker per key list. A file of its own: once refused,
 * the module remembers it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { jsonCopy } from './json-copy.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('jsonCopy on a host that refuses code generation', () => {
  it('copies as JSON.parse(JSON.stringify(v)) does, key order included', () => {
    let refused = 0;
    vi.stubGlobal('Function', function refuse(): never {
      refused++;
      throw new EvalError('Code generation from strings disallowed for this context');
    });
    const values: unknown[] = [
      { id: 'cus_1', object: 'customer', n: -0, nan: NaN, u: undefined, list: [1, undefined, { a: { b: 'c' } }], 2: 'two', 1: 'one' },
      { when: new Date(0), custom: { toJSON: (key: string) => `key:${key}` } },
      Array.from({ length: 50 }, (_, i) => ({ [`k${i}`]: i, shared: true, nested: { id: i } })),
    ];
    for (const v of values) {
      const copied = jsonCopy(v);
      expect(JSON.stringify(copied)).toBe(JSON.stringify(v));
      expect(copied).toStrictEqual(JSON.parse(JSON.stringify(v)));
    }
    // Refused once, then never asked again.
    expect(refused).toBe(1);
  });
});
