/**
 * Bytes in the sandbox: no TextEncoder, atob or Buffer inside QuickJS, so UTF-8, base64 and
 * hex are written out here. Git objects are bytes (a blob need not be text), so the twin keeps
 * file contents as base64 and turns them into bytes only to hash or diff them.
 */

export function utf8Encode(text: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    let cp = text.charCodeAt(i);
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < text.length) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      }
    }
    if (cp < 0x80) out.push(cp);
    else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
    else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
  }
  return Uint8Array.from(out);
}

/** UTF-8 decoding; a malformed sequence becomes U+FFFD, as TextDecoder does by default. */
export function utf8Decode(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] as number;
    let cp = 0xfffd;
    let n = 1;
    if (b < 0x80) cp = b;
    else if (b >= 0xc2 && b < 0xe0 && i + 1 < bytes.length && ((bytes[i + 1] as number) & 0xc0) === 0x80) {
      cp = ((b & 31) << 6) | ((bytes[i + 1] as number) & 63);
      n = 2;
    } else if (b >= 0xe0 && b < 0xf0 && i + 2 < bytes.length && ((bytes[i + 1] as number) & 0xc0) === 0x80 && ((bytes[i + 2] as number) & 0xc0) === 0x80) {
      cp = ((b & 15) << 12) | (((bytes[i + 1] as number) & 63) << 6) | ((bytes[i + 2] as number) & 63);
      n = 3;
      if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
    } else if (b >= 0xf0 && b < 0xf5 && i + 3 < bytes.length && ((bytes[i + 1] as number) & 0xc0) === 0x80 && ((bytes[i + 2] as number) & 0xc0) === 0x80 && ((bytes[i + 3] as number) & 0xc0) === 0x80) {
      cp = ((b & 7) << 18) | (((bytes[i + 1] as number) & 63) << 12) | (((bytes[i + 2] as number) & 63) << 6) | ((bytes[i + 3] as number) & 63);
      n = 4;
      if (cp < 0x10000 || cp > 0x10ffff) cp = 0xfffd;
    }
    out += cp > 0xffff ? String.fromCharCode(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 1023)) : String.fromCharCode(cp);
    i += n;
  }
  return out;
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Character code → 6-bit value, -1 for a character outside the alphabet. */
const B64_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < B64.length; i++) B64_VALUE[B64.charCodeAt(i)] = i;
/** 6-bit value → character code. */
const B64_CODE: number[] = [];
for (let i = 0; i < B64.length; i++) B64_CODE.push(B64.charCodeAt(i));
/**
 * Characters made per `String.fromCharCode.apply`. A plain array of 8192 codes: in V8 that call
 * takes about 1.5 ns a character from an array and 3.5 ns from a typed array, and past about
 * 10 000 arguments it slows down threefold (measured on Node 20).
 */
const B64_CHUNK_CHARS = 8192;

/**
 * Base64 of bytes, written as character codes and turned into text 8 KiB at a time: a clone's
 * answer is megabytes of base64, and this was most of its cost when built from two-character
 * strings (about 20 ms per MiB in V8; 3 ms now).
 */
export function base64Encode(bytes: Uint8Array): string {
  const chunks: string[] = [];
  const whole = bytes.length - (bytes.length % 3);
  const codes: number[] = new Array<number>(B64_CHUNK_CHARS).fill(0);
  const step = (B64_CHUNK_CHARS / 4) * 3;
  for (let start = 0; start < whole; start += step) {
    const end = Math.min(whole, start + step);
    let j = 0;
    for (let i = start; i < end; i += 3) {
      const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
      codes[j] = B64_CODE[n >>> 18] as number;
      codes[j + 1] = B64_CODE[(n >>> 12) & 63] as number;
      codes[j + 2] = B64_CODE[(n >>> 6) & 63] as number;
      codes[j + 3] = B64_CODE[n & 63] as number;
      j += 4;
    }
    if (j < codes.length) codes.length = j;
    chunks.push(String.fromCharCode.apply(null, codes));
  }
  if (whole < bytes.length) {
    const a = bytes[whole] as number, b = bytes[whole + 1];
    const n = (a << 16) | ((b ?? 0) << 8);
    chunks.push(B64.charAt((n >> 18) & 63) + B64.charAt((n >> 12) & 63) + (b === undefined ? '=' : B64.charAt((n >> 6) & 63)) + '=');
  }
  return chunks.join('');
}

/** Decodes base64 (whitespace, as GitHub sends it wrapped, is skipped); undefined when malformed. */
export function base64Decode(text: string): Uint8Array | undefined {
  return base64DecodeCanonical(text) ?? base64DecodeLoose(text);
}

/**
 * Base64 as the twin writes it (blobs, request bodies): no whitespace, padded to whole quads,
 * decoded four characters at a time. Undefined for anything else, which the loose decoder then
 * reads (or refuses) as before.
 */
export function base64DecodeCanonical(text: string): Uint8Array | undefined {
  const n = text.length;
  if (n % 4 !== 0) return undefined;
  const pad = n === 0 ? 0 : text.charCodeAt(n - 1) !== 61 ? 0 : text.charCodeAt(n - 2) !== 61 ? 1 : 2;
  const out = new Uint8Array((n / 4) * 3 - pad);
  const quads = pad === 0 ? n : n - 4;
  let j = 0;
  for (let i = 0; i < quads; i += 4) {
    const c0 = text.charCodeAt(i), c1 = text.charCodeAt(i + 1), c2 = text.charCodeAt(i + 2), c3 = text.charCodeAt(i + 3);
    if ((c0 | c1 | c2 | c3) > 127) return undefined;
    const a = B64_VALUE[c0] as number, b = B64_VALUE[c1] as number, c = B64_VALUE[c2] as number, d = B64_VALUE[c3] as number;
    if ((a | b | c | d) < 0) return undefined;
    const v = (a << 18) | (b << 12) | (c << 6) | d;
    out[j] = v >>> 16;
    out[j + 1] = (v >>> 8) & 255;
    out[j + 2] = v & 255;
    j += 3;
  }
  if (pad === 0) return out;
  const c0 = text.charCodeAt(n - 4), c1 = text.charCodeAt(n - 3), c2 = pad === 1 ? text.charCodeAt(n - 2) : 65;
  if ((c0 | c1 | c2) > 127) return undefined;
  const a = B64_VALUE[c0] as number, b = B64_VALUE[c1] as number, c = B64_VALUE[c2] as number;
  if ((a | b | c) < 0) return undefined;
  const v = (a << 18) | (b << 12) | (c << 6);
  out[j] = v >>> 16;
  if (pad === 1) out[j + 1] = (v >>> 8) & 255;
  return out;
}

/** Any base64 GitHub's API takes: wrapped, unpadded; one character at a time. */
function base64DecodeLoose(text: string): Uint8Array | undefined {
  const out = new Uint8Array(Math.ceil((text.length * 3) / 4));
  let acc = 0, bits = 0, j = 0, digits = 0, pad = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? (B64_VALUE[c] as number) : -1;
    if (v >= 0 && pad === 0) {
      acc = ((acc << 6) | v) & 0xffffff;
      bits += 6;
      digits++;
      if (bits >= 8) {
        bits -= 8;
        out[j++] = (acc >> bits) & 0xff;
      }
    } else if (c === 61) pad++;
    else if (c !== 10 && c !== 13 && c !== 32 && c !== 9 && !/\s/.test(text.charAt(i))) return undefined;
  }
  if (pad > 2 || digits % 4 === 1) return undefined;
  return j === out.length ? out : out.subarray(0, j);
}

export function hex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    s += (b < 16 ? '0' : '') + b.toString(16);
  }
  return s;
}

export function fromHex(text: string): Uint8Array {
  const out = new Uint8Array(text.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.substr(i * 2, 2), 16);
  return out;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** GitHub wraps base64 in the contents and blobs APIs at 60 characters per line. */
export function wrap60(b64: string): string {
  let out = '';
  for (let i = 0; i < b64.length; i += 60) out += b64.slice(i, i + 60) + '\n';
  return out;
}
