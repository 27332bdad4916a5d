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
/** Pairs of base64 characters for every 12-bit value: one table read per 1.5 bytes. */
const B64_PAIRS: string[] = [];
for (let i = 0; i < 4096; i++) B64_PAIRS.push(B64.charAt(i >> 6) + B64.charAt(i & 63));

/** Base64 of bytes. Built in chunks of pairs joined once: megabytes of blobs go through here on a push. */
export function base64Encode(bytes: Uint8Array): string {
  const chunks: string[] = [];
  const whole = bytes.length - (bytes.length % 3);
  const CHUNK = 3 * 8192;
  for (let start = 0; start < whole; start += CHUNK) {
    const end = Math.min(whole, start + CHUNK);
    const pairs: string[] = [];
    for (let i = start; i < end; i += 3) {
      const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
      pairs.push(B64_PAIRS[n >> 12] as string, B64_PAIRS[n & 4095] as string);
    }
    chunks.push(pairs.join(''));
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
