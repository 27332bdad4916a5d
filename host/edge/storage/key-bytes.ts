import { KitError } from '../../../runtime/errors.js';
import type { Key, KeyPart } from '../../../runtime/store/types.js';

/**
 * Storage keys as bytes whose byte-wise order (memcmp: SQLite's order for BLOBs, a shorter
 * run first when one is a prefix of the other) is `compareKeys` order (runtime/store/keys.ts),
 * so a SQLite range scan walks keys as LMDB does. Tuple-layer style, one self-delimiting
 * piece per part:
 *
 * - a number: 0x01, then 8 bytes big-endian (a non-negative safe integer). Fixed width, so
 *   numbers order numerically; 0x01 below 0x02, so before every string.
 * - a string: 0x02, its UTF-8 with each 0x00 written 0x00 0xFF, then 0x00. The terminator is
 *   below every byte a longer string could have there (its own escaped 0x00 is 0x00 0xFF, and
 *   the type byte of a following part is 0x01 or 0x02), so a string sorts before its
 *   extensions, and a key before the keys it is a prefix of.
 *
 * UTF-8 orders well-formed text by code point, which is `compareStrings` order. A lone
 * surrogate (a short key part may hold one; assertKey refuses it only in long parts) is not
 * UTF-8; compareStrings puts a high surrogate U+D800+h just before the astral characters whose
 * high surrogate it is (those from U+10000 + h·0x400), and a low one after every astral
 * character. So a lone high surrogate is written as the UTF-8 of U+10000 + h·0x400 with its
 * last byte 0x7F (below every continuation byte), and a lone low one as 0xF8 (a byte UTF-8
 * never has, above every lead byte) and two bytes of its 10 bits. Both decode back exactly.
 */

const NUMBER = 0x01;
const STRING = 0x02;

/** Where keys are written before their bytes are copied out: grown to the largest key seen. */
let scratch = new Uint8Array(256);

/** The bytes of `key` (checked by the caller with assertKey or assertRangeBound), in a buffer of their own. */
export function encodeKey(key: Key): Uint8Array {
  let size = 0;
  for (const part of key) size += typeof part === 'number' ? 9 : 2 + part.length * 4;
  if (size > scratch.length) scratch = new Uint8Array(Math.max(size, scratch.length * 2));
  const out = scratch;
  let at = 0;
  for (const part of key) {
    if (typeof part === 'number') {
      out[at++] = NUMBER;
      const high = Math.floor(part / 0x1_0000_0000);
      const low = part >>> 0;
      out[at++] = high >>> 24;
      out[at++] = (high >>> 16) & 0xff;
      out[at++] = (high >>> 8) & 0xff;
      out[at++] = high & 0xff;
      out[at++] = low >>> 24;
      out[at++] = (low >>> 16) & 0xff;
      out[at++] = (low >>> 8) & 0xff;
      out[at++] = low & 0xff;
    } else {
      out[at++] = STRING;
      at = writeString(out, at, part);
      out[at++] = 0x00;
    }
  }
  return out.slice(0, at);
}

/** At most 4 bytes per UTF-16 unit: an escaped U+0000 takes 2, an astral pair 4 for 2 units, a lone surrogate 4 or 3. */
function writeString(out: Uint8Array, at: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      out[at++] = c;
      if (c === 0) out[at++] = 0xff;
    } else if (c < 0x800) {
      out[at++] = 0xc0 | (c >> 6);
      out[at++] = 0x80 | (c & 0x3f);
    } else if (c < 0xd800 || c > 0xdfff) {
      out[at++] = 0xe0 | (c >> 12);
      out[at++] = 0x80 | ((c >> 6) & 0x3f);
      out[at++] = 0x80 | (c & 0x3f);
    } else if (c <= 0xdbff) {
      const next = s.charCodeAt(i + 1); // NaN past the end
      const paired = next >= 0xdc00 && next <= 0xdfff;
      const cp = 0x10000 + ((c - 0xd800) << 10) + (paired ? next - 0xdc00 : 0);
      out[at++] = 0xf0 | (cp >> 18);
      out[at++] = 0x80 | ((cp >> 12) & 0x3f);
      out[at++] = 0x80 | ((cp >> 6) & 0x3f);
      out[at++] = paired ? 0x80 | (cp & 0x3f) : LONE_HIGH_LAST;
      if (paired) i++;
    } else {
      const v = c - 0xdc00;
      out[at++] = LONE_LOW;
      out[at++] = 0x80 | (v >> 6);
      out[at++] = 0x80 | (v & 0x3f);
    }
  }
  return at;
}

const LONE_HIGH_LAST = 0x7f;
const LONE_LOW = 0xf8;

/** The key `encodeKey` wrote; bytes it could not have written are `storage_corrupt`. */
export function decodeKey(bytes: Uint8Array): Key {
  const key: KeyPart[] = [];
  let at = 0;
  while (at < bytes.length) {
    const type = bytes[at++];
    if (type === NUMBER) {
      if (at + 8 > bytes.length) throw corrupt(bytes);
      const high = ((bytes[at] as number) * 0x100_0000 + ((bytes[at + 1] as number) << 16) + ((bytes[at + 2] as number) << 8) + (bytes[at + 3] as number));
      const low = ((bytes[at + 4] as number) * 0x100_0000 + ((bytes[at + 5] as number) << 16) + ((bytes[at + 6] as number) << 8) + (bytes[at + 7] as number));
      const n = high * 0x1_0000_0000 + low;
      if (!Number.isSafeInteger(n)) throw corrupt(bytes);
      key.push(n);
      at += 8;
    } else if (type === STRING) {
      at = readString(bytes, at, key);
    } else {
      throw corrupt(bytes);
    }
  }
  if (key.length === 0) throw corrupt(bytes);
  return key;
}

/** Reads one string part from `at` (past its type byte) into `key`; answers where the next part starts. */
function readString(bytes: Uint8Array, at: number, key: KeyPart[]): number {
  const units: number[] = [];
  for (;;) {
    if (at >= bytes.length) throw corrupt(bytes);
    const b = bytes[at++] as number;
    if (b === 0) {
      if (bytes[at] !== 0xff) break;
      units.push(0);
      at++;
    } else if (b < 0x80) {
      units.push(b);
    } else if (b >= 0xc2 && b < 0xe0) {
      units.push(((b & 0x1f) << 6) | continuation(bytes, at++));
    } else if (b >= 0xe0 && b < 0xf0) {
      const c = ((b & 0x0f) << 12) | (continuation(bytes, at) << 6) | continuation(bytes, at + 1);
      at += 2;
      if (c < 0x800 || (c >= 0xd800 && c <= 0xdfff)) throw corrupt(bytes);
      units.push(c);
    } else if (b >= 0xf0 && b <= 0xf4) {
      const top = ((b & 0x07) << 18) | (continuation(bytes, at) << 12) | (continuation(bytes, at + 1) << 6);
      const last = bytes[at + 2];
      at += 3;
      if (top < 0x10000 || top > 0x10ffff) throw corrupt(bytes);
      if (last === LONE_HIGH_LAST) {
        // Written only for a block's first code point: the lone surrogate's 10 bits are the high ones.
        if ((top & 0x3ff) !== 0) throw corrupt(bytes);
        units.push(0xd800 + ((top - 0x10000) >> 10));
      } else {
        const cp = top | continuation(bytes, at - 1);
        units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
      }
    } else if (b === LONE_LOW) {
      units.push(0xdc00 + ((continuation(bytes, at) << 6) | continuation(bytes, at + 1)));
      at += 2;
    } else {
      throw corrupt(bytes);
    }
  }
  key.push(unitsToString(units));
  return at;
}

function continuation(bytes: Uint8Array, at: number): number {
  const b = bytes[at];
  if (b === undefined || (b & 0xc0) !== 0x80) throw corrupt(bytes);
  return b & 0x3f;
}

function unitsToString(units: number[]): string {
  // fromCharCode with many arguments; in slices, under any engine's argument limit.
  if (units.length <= 4096) return String.fromCharCode(...units);
  let s = '';
  for (let i = 0; i < units.length; i += 4096) s += String.fromCharCode(...units.slice(i, i + 4096));
  return s;
}

function corrupt(bytes: Uint8Array): KitError {
  const hex = Array.from(bytes.subarray(0, 64), (b) => b.toString(16).padStart(2, '0')).join('');
  return new KitError('storage_corrupt', `a stored key is not one this storage writes (${hex}${bytes.length > 64 ? '…' : ''})`);
}
