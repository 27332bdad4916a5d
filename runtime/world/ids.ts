/**
 * Deterministic ids and random numbers, seeded by (world, twin, position).
 * Pure JavaScript with no Node imports: the same file is bundled into every twin's
 * sandbox module, so the host and the guest agree on every id.
 */

export interface IdSource {
  /** `id('cus_')` → `cus_` followed by `length` base-62 characters (default 14). */
  id(prefix: string, length?: number): string;
  /** A number in [0, 1). */
  random(): number;
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** cyrb128: four 32-bit seeds from a string. */
function seedOf(text: string): [number, number, number, number] {
  let h1 = 1779033703, h2 = 3144134277, h3 = 1013904242, h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** sfc32: a small, fast generator with a 128-bit state. */
function sfc32(seed: [number, number, number, number]): () => number {
  let [a, b, c, d] = seed;
  return () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

/** The generator for one entry. Same inputs, same sequence. */
export function idSource(world: string, twin: string, position: number): IdSource {
  const next = sfc32(seedOf(`${world}\u0000${twin}\u0000${position}`));
  return {
    id(prefix: string, length = 14): string {
      let out = prefix;
      for (let i = 0; i < length; i++) out += ALPHABET[Math.floor(next() * 62)];
      return out;
    },
    random: next,
  };
}
