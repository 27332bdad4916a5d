import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.js';

describe('canonicalJson', () => {
  it('sorts keys at every level and drops what JSON drops', () => {
    const a = { b: 1, a: { d: [3, { z: 1, y: undefined, x: NaN }], c: 'é' }, u: undefined, f: () => 1 };
    expect(canonicalJson(a)).toBe('{"a":{"c":"é","d":[3,{"x":null,"z":1}]},"b":1}');
    expect(canonicalJson({ a: { c: 'é', d: [3, { x: null, z: 1 }] }, b: 1 })).toBe(canonicalJson(a));
    expect(canonicalJson([undefined, Infinity, true, null])).toBe('[null,null,true,null]');
  });

  it('matches JSON.stringify on plain JSON with sorted keys', () => {
    const v = { k: ['x', 1.5, -0, { '\u{1F600}': 1, '\uFFFF': 2, A: 3 }], s: 'line\n"quoted"' };
    const sortedStringify = (x: unknown): string =>
      JSON.stringify(x, (_k, val: unknown) =>
        val !== null && typeof val === 'object' && !Array.isArray(val)
          ? Object.fromEntries(Object.entries(val).sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0)))
          : val,
      );
    expect(canonicalJson(v)).toBe(sortedStringify(v));
  });
});
