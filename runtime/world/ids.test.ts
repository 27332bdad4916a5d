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

  it('makes ordered ids: position, number in the entry, then random characters', () => {
    const s = idSource('w', 't', 62);
    const a = s.orderedId('msg_');
    const b = s.orderedId('msg_', 20);
    expect(a).toMatch(/^msg_0000010000[0-9A-Za-z]{4}$/);
    expect(b).toMatch(/^msg_0000010001[0-9A-Za-z]{10}$/);
    expect(idSource('w', 't', 62).orderedId('msg_')).toBe(a);
    // A later position sorts after, whatever the number within the earlier entry.
    const earlier = idSource('w', 't', 61);
    let last = '';
    for (let i = 0; i < 300; i++) last = earlier.orderedId('msg_');
    expect(last < a).toBe(true);
    expect(idSource('w', 't', 62 ** 7 - 1).orderedId('m_', 10)).toBe('m_zzzzzzz000');
  });

  it('refuses an ordered id that cannot keep its order', () => {
    expect(() => idSource('w', 't', 1).orderedId('m_', 9)).toThrow(RangeError);
    expect(() => idSource('w', 't', 62 ** 7).orderedId('m_')).toThrow(/past what an ordered id can hold/);
    const s = idSource('w', 't', 1);
    for (let i = 0; i < 62 ** 3; i++) s.orderedId('m_', 10);
    expect(() => s.orderedId('m_', 10)).toThrow(/at most 238328 ordered ids/);
  });
});
