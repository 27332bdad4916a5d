import { describe, expect, it } from 'vitest';
import { idSource } from './ids.js';

describe('idSource', () => {
  it('gives the same ids for the same (world, twin, position)', () => {
    const a = idSource('acme', 'stripe', 7);
    const b = idSource('acme', 'stripe', 7);
    expect([a.id('cus_'), a.id('pi_', 24), a.random()]).toEqual([b.id('cus_'), b.id('pi_', 24), b.random()]);
  });

  it('gives different ids when any seed part differs', () => {
    const ids = new Set([
      idSource('acme', 'stripe', 7).id('cus_'),
      idSource('acme', 'stripe', 8).id('cus_'),
      idSource('acme', 'github', 7).id('cus_'),
      idSource('acme2', 'stripe', 7).id('cus_'),
      // the separator keeps ('ab','c') apart from ('a','bc')
      idSource('ab', 'c', 1).id('x'),
      idSource('a', 'bc', 1).id('x'),
    ]);
    expect(ids.size).toBe(6);
  });

  it('makes prefixed base-62 ids of the asked length and numbers in [0, 1)', () => {
    const s = idSource('w', 't', 1);
    expect(s.id('cus_')).toMatch(/^cus_[0-9A-Za-z]{14}$/);
    expect(s.id('', 30)).toMatch(/^[0-9A-Za-z]{30}$/);
    for (let i = 0; i < 1000; i++) {
      const r = s.random();
      expect(r).toBeGreaterThanOrEqual(0);
      expect(r).toBeLessThan(1);
    }
  });
});
