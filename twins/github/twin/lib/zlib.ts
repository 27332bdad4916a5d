/**
 * zlib for git packs. Inflating is the twin SDK's (`sdk/twin/codec.ts`: the host's zlib where it
 * offers one, else pako), here held to the words git shows for a refused push (`InflateError`).
 * Writing stays here: `storedInto` writes a valid zlib stream without compressing, which every
 * git accepts and which lets an upload-pack answer copy a blob's stored base64 (lib/pack.ts).
 */
import { CodecError, gunzip as codecGunzip, inflateAt } from '../../../../sdk/twin/codec.js';

export class InflateError extends Error {}

/** The SDK's failure in the words a push's `unpack` line has always used. */
function asInflateError(e: unknown): unknown {
  if (!(e instanceof CodecError)) return e;
  return new InflateError(e.code === 'too_large' ? 'inflated data too large' : e.message.replace(/^bad compressed data: /, ''));
}

/** Inflates the zlib stream starting at `start`; answers the bytes and the offset after the stream (its Adler-32 included). */
export function inflate(src: Uint8Array, start = 0, maxOut = 64 * 1024 * 1024): { data: Uint8Array; end: number } {
  try {
    return inflateAt(src, start, { maxBytes: maxOut });
  } catch (e) {
    throw asInflateError(e);
  }
}

/** A gzip body (as git sends large requests with `Content-Encoding: gzip`). */
export function gunzip(src: Uint8Array, maxOut = 64 * 1024 * 1024): Uint8Array {
  try {
    return codecGunzip(src, { maxBytes: maxOut });
  } catch (e) {
    throw asInflateError(e);
  }
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
