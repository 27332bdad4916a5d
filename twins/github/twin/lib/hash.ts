/**
 * SHA-1 (git object ids), SHA-256 and HMAC-SHA256 (`X-Hub-Signature-256`, token hashes) in
 * plain JavaScript: the sandbox has no crypto. Tested against Node's crypto and `git hash-object`.
 */
import { concat, hex, utf8Encode } from './bytes.js';

function pad(data: Uint8Array): { padded: Uint8Array; view: DataView } {
  const bitLen = data.length * 8;
  const padded = new Uint8Array(((data.length + 9 + 63) >> 6) << 6);
  padded.set(data);
  padded[data.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLen / 0x100000000));
  view.setUint32(padded.length - 4, bitLen >>> 0);
  return { padded, view };
}

/**
 * SHA-1 of the concatenation of `parts`, read in place (a git object id hashes its header and a
 * content of megabytes: no copy into one padded buffer). Whole blocks are read straight from each
 * part; only a block that straddles two parts, and the padding, go through a 64-byte buffer.
 */
export function sha1(...parts: Uint8Array[]): Uint8Array {
  const st = Int32Array.of(0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0);
  const w = new Int32Array(80);
  const block = new Uint8Array(64);
  let fill = 0, total = 0;
  for (const p of parts) {
    total += p.length;
    let i = 0;
    if (fill > 0) {
      i = Math.min(64 - fill, p.length);
      block.set(p.subarray(0, i), fill);
      fill += i;
      if (fill < 64) continue;
      sha1Block(st, w, block, 0);
      fill = 0;
    }
    for (; i + 64 <= p.length; i += 64) sha1Block(st, w, p, i);
    if (i < p.length) {
      block.set(p.subarray(i), 0);
      fill = p.length - i;
    }
  }
  block[fill++] = 0x80;
  if (fill > 56) {
    block.fill(0, fill);
    sha1Block(st, w, block, 0);
    fill = 0;
  }
  block.fill(0, fill, 56);
  const hi = Math.floor(total / 0x20000000), lo = (total * 8) >>> 0;
  block[56] = hi >>> 24; block[57] = hi >>> 16; block[58] = hi >>> 8; block[59] = hi;
  block[60] = lo >>> 24; block[61] = lo >>> 16; block[62] = lo >>> 8; block[63] = lo;
  sha1Block(st, w, block, 0);
  const out = new Uint8Array(20);
  for (let i = 0; i < 5; i++) {
    const v = st[i] as number;
    out[i * 4] = v >>> 24; out[i * 4 + 1] = v >>> 16; out[i * 4 + 2] = v >>> 8; out[i * 4 + 3] = v;
  }
  return out;
}

/** One 64-byte block at `off` of `src` into the state `st`; `w` is scratch. The four rounds are separate loops: no branch per step. */
function sha1Block(st: Int32Array, w: Int32Array, src: Uint8Array, off: number): void {
  for (let i = 0; i < 16; i++, off += 4) {
    w[i] = ((src[off] as number) << 24) | ((src[off + 1] as number) << 16) | ((src[off + 2] as number) << 8) | (src[off + 3] as number);
  }
  for (let i = 16; i < 80; i++) {
    const x = (w[i - 3] as number) ^ (w[i - 8] as number) ^ (w[i - 14] as number) ^ (w[i - 16] as number);
    w[i] = (x << 1) | (x >>> 31);
  }
  let a = st[0] as number, b = st[1] as number, c = st[2] as number, d = st[3] as number, e = st[4] as number, t: number;
  for (let i = 0; i < 20; i++) {
    t = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + 0x5a827999 + (w[i] as number)) | 0;
    e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = t;
  }
  for (let i = 20; i < 40; i++) {
    t = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0x6ed9eba1 + (w[i] as number)) | 0;
    e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = t;
  }
  for (let i = 40; i < 60; i++) {
    t = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + 0x8f1bbcdc + (w[i] as number)) | 0;
    e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = t;
  }
  for (let i = 60; i < 80; i++) {
    t = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0xca62c1d6 + (w[i] as number)) | 0;
    e = d; d = c; c = (b << 30) | (b >>> 2); b = a; a = t;
  }
  st[0] = (st[0] as number) + a; st[1] = (st[1] as number) + b; st[2] = (st[2] as number) + c; st[3] = (st[3] as number) + d; st[4] = (st[4] as number) + e;
}

const K = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

export function sha256(data: Uint8Array): Uint8Array {
  const h = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
  const { padded, view } = pad(data);
  const w = new Int32Array(64);
  for (let off = 0; off < padded.length; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(off + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15] as number, b = w[i - 2] as number;
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = ((w[i - 16] as number) + s0 + (w[i - 7] as number) + s1) | 0;
    }
    let a = h[0] as number, b = h[1] as number, c = h[2] as number, d = h[3] as number;
    let e = h[4] as number, f = h[5] as number, g = h[6] as number, hh = h[7] as number;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (hh + S1 + ch + (K[i] as number) + (w[i] as number)) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) | 0;
      hh = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    h[0] = ((h[0] as number) + a) | 0; h[1] = ((h[1] as number) + b) | 0; h[2] = ((h[2] as number) + c) | 0; h[3] = ((h[3] as number) + d) | 0;
    h[4] = ((h[4] as number) + e) | 0; h[5] = ((h[5] as number) + f) | 0; h[6] = ((h[6] as number) + g) | 0; h[7] = ((h[7] as number) + hh) | 0;
  }
  const out = new Uint8Array(32);
  const ov = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) ov.setInt32(i * 4, h[i] as number);
  return out;
}

export function hmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array {
  const k = new Uint8Array(64);
  k.set(key.length > 64 ? sha256(key) : key);
  const ipad = new Uint8Array(64), opad = new Uint8Array(64);
  for (let i = 0; i < 64; i++) {
    ipad[i] = (k[i] as number) ^ 0x36;
    opad[i] = (k[i] as number) ^ 0x5c;
  }
  return sha256(concat([opad, sha256(concat([ipad, message]))]));
}

/** The git object id of `<type> <size>\0<content>`. */
export function gitObjectId(type: string, content: Uint8Array): string {
  return hex(sha1(utf8Encode(`${type} ${content.length}\0`), content));
}

/** `X-Hub-Signature-256` for a payload, as GitHub signs it: `sha256=<hex HMAC of the body>`. */
export function hubSignature256(secret: string, body: string): string {
  return 'sha256=' + hex(hmacSha256(utf8Encode(secret), utf8Encode(body)));
}

/**
 * A cheap fingerprint for ETags (no security rests on it): FNV-1a over the text plus its
 * length. One multiply per character keeps it affordable in the interpreter on large lists.
 */
export function fingerprint(text: string): string {
  let a = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) a = Math.imul(a ^ text.charCodeAt(i), 0x01000193);
  return (a >>> 0).toString(16).padStart(8, '0') + text.length.toString(16).padStart(8, '0');
}
