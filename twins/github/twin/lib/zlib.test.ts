import { deflateSync, inflateSync, constants } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InflateError, deflateStored, inflate } from './zlib.js';

function sample(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  let s = seed;
  // Text-like with repeats, so deflate uses dynamic blocks and back-references.
  const words = ['tree ', 'parent ', 'author ', 'hello', '\n', 'world ', '0123456789abcdef'];
  let o = 0;
  while (o < n) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const w = Buffer.from(words[s % words.length] as string);
    w.copy(b, o);
    o += w.length;
  }
  return b;
}

describe('zlib', () => {
  it('inflates what Node deflates at every level and strategy, and says where each stream ends', () => {
    for (const n of [0, 1, 100, 5000, 200_000]) {
      for (const level of [0, 1, 6, 9]) {
        for (const strategy of [constants.Z_DEFAULT_STRATEGY, constants.Z_FIXED, constants.Z_HUFFMAN_ONLY]) {
          const data = sample(n, n + level);
          const z = deflateSync(data, { level, strategy });
          const joined = Buffer.concat([z, Buffer.from('NEXT')]);
          const { data: out, end } = inflate(joined);
          expect(Buffer.from(out).equals(data)).toBe(true);
          expect(end).toBe(z.length);
        }
      }
    }
  });

  it('writes stored streams Node can read', () => {
    // Past 5552 bytes the adler-32 sums are reduced once per run: a long run of 0xff checks that they do not overflow.
    expect(inflateSync(deflateStored(new Uint8Array(300_000).fill(255))).length).toBe(300_000);
    for (const n of [0, 10, 5552, 5553, 65535, 65536, 150_000]) {
      const data = sample(n, 7);
      expect(inflateSync(deflateStored(data)).equals(data)).toBe(true);
    }
  });

  it('refuses corrupt input with InflateError, never a crash', () => {
    const z = deflateSync(sample(3000, 1));
    const bad = Buffer.from(z);
    bad[bad.length - 1] = (bad[bad.length - 1] as number) ^ 0xff;
    expect(() => inflate(bad)).toThrow(InflateError);
    expect(() => inflate(z.subarray(0, z.length - 10))).toThrow(InflateError);
    expect(() => inflate(Buffer.from([1, 2, 3]))).toThrow(InflateError);
    expect(() => inflate(deflateSync(sample(100_000, 3)), 0, 1000)).toThrow(InflateError);
    for (let i = 0; i < 200; i++) {
      const fuzz = Buffer.from(z);
      fuzz[2 + (i * 7) % (fuzz.length - 2)] = (i * 31) & 0xff;
      try { inflate(fuzz); } catch (e) { expect(e).toBeInstanceOf(InflateError); }
    }
  });
});
