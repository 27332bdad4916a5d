import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../test/helpers/random.js';
import { KeyMap, compareKeys } from './keys.js';
import type { Key } from './types.js';

describe('KeyMap', () => {
  it('holds a value per key, tells numbers from strings and a key from its prefix, and keeps first-set order', () => {
    const m = new KeyMap<string>();
    m.set(['w', 'head', 'cus_1'], 'a');
    m.set(['w', 1], 'number');
    m.set(['w', '1'], 'string');
    m.set(['w'], 'prefix');
    m.set(['w', 'head', 'cus_1'], 'a2');
    expect(m.size).toBe(4);
    expect([m.get(['w', 'head', 'cus_1']), m.get(['w', 1]), m.get(['w', '1']), m.get(['w'])]).toEqual(['a2', 'number', 'string', 'prefix']);
    expect([m.get(['w', 'head']), m.get(['w', 'head', 'cus_1', 'x']), m.get(['x'])]).toEqual([undefined, undefined, undefined]);
    expect([...m.values()]).toEqual(['a2', 'number', 'string', 'prefix']);
  });

  it('finds every key of a range among its candidates (random keys and ranges against a scan)', () => {
    const next = seededRandom(7);
    const rand = (n: number): number => Math.floor(next() * n);
    const part = (): string | number => (rand(3) === 0 ? rand(4) : ['', 'a', 'a\u0000', 'ab', 'b', 'é'][rand(6)] as string);
    const key = (): Key => Array.from({ length: 1 + rand(4) }, part);
    for (let round = 0; round < 200; round++) {
      const m = new KeyMap<Key>();
      const all: Key[] = [];
      for (let i = 0; i < 30; i++) {
        const k = key();
        if (m.get(k) === undefined) all.push(k);
        m.set(k, k);
      }
      let [start, end] = [key(), key()];
      if (compareKeys(start, end) > 0) [start, end] = [end, start];
      const inRange = (k: Key): boolean => compareKeys(k, start) >= 0 && compareKeys(k, end) < 0;
      const text = (ks: Key[]): string[] => ks.map((k) => JSON.stringify(k)).sort();
      expect(text(m.within(start, end).filter(inRange))).toEqual(text(all.filter(inRange)));
    }
  });

  it('offers only the keys under the parts a range shares', () => {
    const m = new KeyMap<string>();
    m.set(['w', 'stripe', 'head', 'customer', 'c1'], 'c1');
    m.set(['w', 'stripe', 'head', 'event', 'e1'], 'e1');
    m.set(['w', 'stripe', 'count', 'customer', 4], 'n');
    m.set(['w', 'hello', 'head', 'greeting', 'g1'], 'g1');
    expect(m.within(['w', 'stripe', 'head', 'customer'], ['w', 'stripe', 'head', 'customer\u0000'])).toEqual(['c1']);
    expect(m.within(['w', 'stripe', 'head', 'customer', 'a'], ['w', 'stripe', 'head', 'customer', 'b'])).toEqual([]);
  });
});
