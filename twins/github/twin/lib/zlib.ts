/**
 * zlib for git packs, in plain JavaScript (no zlib in the sandbox): `inflate` reads any zlib
 * stream (stored, fixed and dynamic Huffman blocks) and says where it ended, since a pack
 * puts streams back to back; `deflateStored` writes a valid zlib stream without compressing,
 * which every git accepts.
 */

export class InflateError extends Error {}

const LEN_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LEN_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
const CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

interface Huffman { counts: Uint16Array; symbols: Uint16Array }

function huffman(lengths: ArrayLike<number>, n: number): Huffman {
  const counts = new Uint16Array(16);
  for (let i = 0; i < n; i++) counts[lengths[i] as number]!++;
  counts[0] = 0;
  const offs = new Uint16Array(16);
  for (let i = 1; i < 16; i++) offs[i] = (offs[i - 1] as number) + (counts[i - 1] as number);
  const symbols = new Uint16Array(n);
  for (let i = 0; i < n; i++) if ((lengths[i] as number) !== 0) symbols[offs[lengths[i] as number]!++] = i;
  return { counts, symbols };
}

let FIXED: { lit: Huffman; dist: Huffman } | undefined;
function fixed(): { lit: Huffman; dist: Huffman } {
  if (FIXED === undefined) {
    const l = new Uint8Array(288);
    for (let i = 0; i < 288; i++) l[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
    FIXED = { lit: huffman(l, 288), dist: huffman(new Uint8Array(30).fill(5), 30) };
  }
  return FIXED;
}

/** Inflates the zlib stream starting at `start`; answers the bytes and the offset after the stream (its Adler-32 included). */
export function inflate(src: Uint8Array, start = 0, maxOut = 64 * 1024 * 1024): { data: Uint8Array; end: number } {
  if (start + 2 > src.length) throw new InflateError('truncated zlib header');
  const cmf = src[start] as number, flg = src[start + 1] as number;
  if ((cmf & 15) !== 8 || ((cmf << 8) | flg) % 31 !== 0 || (flg & 0x20) !== 0) throw new InflateError('not a zlib stream');
  const { data, end } = inflateRaw(src, start + 2, maxOut);
  if (end + 4 > src.length) throw new InflateError('truncated zlib trailer');
  const a = adler32(data);
  const t = src.subarray(end, end + 4);
  if ((((t[0] as number) << 24) | ((t[1] as number) << 16) | ((t[2] as number) << 8) | (t[3] as number)) >>> 0 !== a) throw new InflateError('zlib checksum mismatch');
  return { data, end: end + 4 };
}

/** A gzip body (as git sends large requests with `Content-Encoding: gzip`); the CRC is not checked. */
export function gunzip(src: Uint8Array, maxOut = 64 * 1024 * 1024): Uint8Array {
  if (src.length < 18 || src[0] !== 0x1f || src[1] !== 0x8b || src[2] !== 8) throw new InflateError('not a gzip stream');
  const flags = src[3] as number;
  let pos = 10;
  if (flags & 4) pos += 2 + ((src[pos] as number) | ((src[pos + 1] as number) << 8));
  if (flags & 8) while (pos < src.length && src[pos++] !== 0);
  if (flags & 16) while (pos < src.length && src[pos++] !== 0);
  if (flags & 2) pos += 2;
  return inflateRaw(src, pos, maxOut).data;
}

/** Raw deflate data from `start`; `end` is the first whole byte after the last block. */
export function inflateRaw(src: Uint8Array, start: number, maxOut = 64 * 1024 * 1024): { data: Uint8Array; end: number } {
  let pos = start;
  let bitBuf = 0, bitCnt = 0;
  let out = new Uint8Array(1024);
  let outLen = 0;
  const need = (n: number): void => {
    if (outLen + n <= out.length) return;
    if (outLen + n > maxOut) throw new InflateError('inflated data too large');
    let size = out.length * 2;
    while (size < outLen + n) size *= 2;
    const next = new Uint8Array(Math.min(size, maxOut));
    next.set(out.subarray(0, outLen));
    out = next;
  };
  const bits = (n: number): number => {
    while (bitCnt < n) {
      if (pos >= src.length) throw new InflateError('truncated deflate data');
      bitBuf |= (src[pos++] as number) << bitCnt;
      bitCnt += 8;
    }
    const v = bitBuf & ((1 << n) - 1);
    bitBuf >>>= n;
    bitCnt -= n;
    return v;
  };
  const decode = (h: Huffman): number => {
    let code = 0, first = 0, index = 0;
    for (let len = 1; len < 16; len++) {
      code |= bits(1);
      const count = h.counts[len] as number;
      if (code - count < first) return h.symbols[index + (code - first)] as number;
      index += count;
      first += count;
      first <<= 1;
      code <<= 1;
    }
    throw new InflateError('bad Huffman code');
  };
  let final = 0;
  do {
    final = bits(1);
    const type = bits(2);
    if (type === 0) {
      bitBuf = 0;
      bitCnt = 0;
      if (pos + 4 > src.length) throw new InflateError('truncated stored block');
      const len = (src[pos] as number) | ((src[pos + 1] as number) << 8);
      const nlen = (src[pos + 2] as number) | ((src[pos + 3] as number) << 8);
      if ((len ^ 0xffff) !== nlen) throw new InflateError('bad stored block length');
      pos += 4;
      if (pos + len > src.length) throw new InflateError('truncated stored block');
      need(len);
      out.set(src.subarray(pos, pos + len), outLen);
      outLen += len;
      pos += len;
      continue;
    }
    let lit: Huffman, dist: Huffman;
    if (type === 1) ({ lit, dist } = fixed());
    else if (type === 2) {
      const hlit = bits(5) + 257, hdist = bits(5) + 1, hclen = bits(4) + 4;
      const cl = new Uint8Array(19);
      for (let i = 0; i < hclen; i++) cl[CL_ORDER[i] as number] = bits(3);
      const clh = huffman(cl, 19);
      const lengths = new Uint8Array(hlit + hdist);
      for (let i = 0; i < hlit + hdist;) {
        const sym = decode(clh);
        if (sym < 16) lengths[i++] = sym;
        else {
          let rep = 0, val = 0;
          if (sym === 16) {
            if (i === 0) throw new InflateError('repeat with no previous length');
            val = lengths[i - 1] as number;
            rep = 3 + bits(2);
          } else if (sym === 17) rep = 3 + bits(3);
          else rep = 11 + bits(7);
          if (i + rep > hlit + hdist) throw new InflateError('too many code lengths');
          while (rep-- > 0) lengths[i++] = val;
        }
      }
      lit = huffman(lengths.subarray(0, hlit), hlit);
      dist = huffman(lengths.subarray(hlit), hdist);
    } else throw new InflateError('bad block type');
    for (;;) {
      const sym = decode(lit);
      if (sym < 256) {
        need(1);
        out[outLen++] = sym;
      } else if (sym === 256) break;
      else {
        const li = sym - 257;
        if (li >= 29) throw new InflateError('bad length symbol');
        const len = (LEN_BASE[li] as number) + bits(LEN_EXTRA[li] as number);
        const di = decode(dist);
        if (di >= 30) throw new InflateError('bad distance symbol');
        const d = (DIST_BASE[di] as number) + bits(DIST_EXTRA[di] as number);
        if (d > outLen) throw new InflateError('distance too far back');
        need(len);
        for (let k = 0; k < len; k++, outLen++) out[outLen] = out[outLen - d] as number;
      }
    }
  } while (final === 0);
  // Bits left in the buffer are padding of the last byte read.
  return { data: out.slice(0, outLen), end: pos };
}

/** Adler-32, reducing modulo 65521 once per 5552 bytes (zlib's NMAX: the sums cannot pass 2^32 before). */
export function adler32(data: Uint8Array): number {
  let a = 1, b = 0;
  for (let i = 0; i < data.length; ) {
    const stop = Math.min(data.length, i + 5552);
    for (; i < stop; i++) {
      a += data[i] as number;
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** The size of `storedInto`'s stream for `length` bytes. */
export function storedSize(length: number): number {
  return 2 + Math.max(1, Math.ceil(length / 65535)) * 5 + length + 4;
}

/**
 * Writes a zlib stream of stored (uncompressed) blocks of `data` into `out` at `at`, and answers
 * where it ends (`at + storedSize(data.length)`): a pack is written in place, not copied together.
 */
export function storedInto(out: Uint8Array, at: number, data: Uint8Array): number {
  const blocks = Math.max(1, Math.ceil(data.length / 65535));
  out[at] = 0x78;
  out[at + 1] = 0x01;
  let o = at + 2;
  for (let b = 0; b < blocks; b++) {
    const chunk = data.subarray(b * 65535, Math.min(data.length, (b + 1) * 65535));
    out[o++] = b === blocks - 1 ? 1 : 0;
    out[o++] = chunk.length & 0xff;
    out[o++] = chunk.length >> 8;
    out[o++] = ~chunk.length & 0xff;
    out[o++] = (~chunk.length >> 8) & 0xff;
    out.set(chunk, o);
    o += chunk.length;
  }
  const a = adler32(data);
  out[o++] = a >>> 24;
  out[o++] = (a >>> 16) & 0xff;
  out[o++] = (a >>> 8) & 0xff;
  out[o++] = a & 0xff;
  return o;
}

/** A zlib stream of stored (uncompressed) blocks. */
export function deflateStored(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(storedSize(data.length));
  storedInto(out, 0, data);
  return out;
}
