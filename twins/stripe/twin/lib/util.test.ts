import { describe, expect, it } from 'vitest';
import { canonical, hash62 } from './util.js';

describe('hash62', () => {
  it('answers only base-62 characters of the asked length, for many inputs (a bug once let "undefined" in)', () => {
    for (let i = 0; i < 2000; i++) {
      const h = hash62(`key:sk_test_${i}_${'x'.repeat(i % 50)}`, 16);
      expect(h).toMatch(/^[0-9A-Za-z]{16}$/);
    }
  });

  it('is stable and tells inputs apart', () => {
    expect(hash62('a')).toBe(hash62('a'));
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) seen.add(hash62(`sk_test_${i}`, 16));
    expect(seen.size).toBe(5000);
  });
});

describe('canonical', () => {
  it('orders keys, so equal parameter sets fingerprint alike', () => {
    expect(canonical({ b: 1, a: { d: [1, 2], c: null } })).toBe(canonical({ a: { c: null, d: [1, 2] }, b: 1 }));
    expect(canonical({ a: [1, 2] })).not.toBe(canonical({ a: [2, 1] }));
  });
});
