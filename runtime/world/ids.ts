/**
 * Deterministic ids and random numbers, seeded by (world, twin, position).
 * Pure JavaScript with no Node imports: the same file is bundled into every twin's
 * sandbox module, so the host and the guest agree on every id.
 */

export interface IdSource {
  /** `id('cus_')` → `cus_` followed by `length` base-62 characters (default 14). */
  id(prefix: string, length?: number): string;
  /**
   * `orderedId('msg_')` → `msg_` followed by `length` base-62 characters (default 14, at
   * least ORDERED_DIGITS): the entry's position (7 digits), the id's number within the entry
   * (3 digits), then random characters. It sorts after every ordered id with the same prefix
   * made at an earlier position, or earlier in the same entry. Records keyed by such ids sit
   * next to each other in storage: a commit of new ones rewrites the same few B-tree pages,
   * where random ids scatter them (hello's POST wrote 80 KB per request with random ids,
   * 8.3 KB with ordered ones; bench/README.md).
   */
  orderedId(prefix: string, length?: number): string;
  /** A number in [0, 1). */
  random(): number;
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const POSITION_DIGITS = 7;
const NUMBER_DIGITS = 3;
/** The fewest characters an ordered id has after its prefix: the position and the number. */
export const ORDERED_DIGITS = POSITION_DIGITS + NUMBER_DIGITS;

/** `n` as `width` base-62 digits (ASCII order of the digits is numeric order), or undefined when it does not fit. */
function digits(n: number, width: number): string | undefined {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = (ALPHABET[n % 62] as string) + out;
    n = Math.floor(n / 62);
  }
  return n > 0 ? undefined : out;
}

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
  const id = (prefix: string, length = 14): string => {
    let out = prefix;
    for (let i = 0; i < length; i++) out += ALPHABET[Math.floor(next() * 62)];
    return out;
  };
  let made = 0;
  return {
    id,
    orderedId(prefix: string, length = 14): string {
      if (length < ORDERED_DIGITS) throw new RangeError(`an ordered id has at least ${ORDERED_DIGITS} characters after its prefix`);
      const at = digits(position, POSITION_DIGITS);
      if (at === undefined) throw new RangeError(`position ${position} is past what an ordered id can hold`);
      const number = digits(made, NUMBER_DIGITS);
      if (number === undefined) throw new RangeError(`an entry makes at most ${62 ** NUMBER_DIGITS} ordered ids`);
      made++;
      return id(prefix + at + number, length - ORDERED_DIGITS);
    },
    random: next,
  };
}
