/**
 * Byte encodings the mail parser needs, written for the sandbox (QuickJS has no TextDecoder,
 * atob or Buffer). Bytes are binary strings throughout: one character per byte, 0..255.
 */

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_INDEX: number[] = (() => {
  const t: number[] = [];
  for (let i = 0; i < 256; i++) t.push(-1);
  for (let i = 0; i < 64; i++) t[B64.charCodeAt(i)] = i;
  // base64url, which some senders use in encoded words
  t[45] = 62;
  t[95] = 63;
  return t;
})();

/** Decodes base64, skipping anything that is not in its alphabet (line breaks, stray spaces). */
export function base64Decode(text: string): string {
  const out: string[] = [];
  let chunk: number[] = [];
  let bits = 0;
  let acc = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 61) break; // '=': the rest is padding
    const v = c < 256 ? B64_INDEX[c]! : -1;
    if (v < 0) continue;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      chunk.push((acc >> bits) & 0xff);
      if (chunk.length >= 4096) {
        out.push(String.fromCharCode.apply(null, chunk));
        chunk = [];
      }
    }
  }
  if (chunk.length > 0) out.push(String.fromCharCode.apply(null, chunk));
  return out.join('');
}

/** Encodes a binary string as base64 (no line breaks). */
export function base64Encode(bytes: string): string {
  const out: string[] = [];
  let line = '';
  const n = bytes.length;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const v = (bytes.charCodeAt(i) << 16) | (bytes.charCodeAt(i + 1) << 8) | bytes.charCodeAt(i + 2);
    line += B64[(v >> 18) & 63]! + B64[(v >> 12) & 63]! + B64[(v >> 6) & 63]! + B64[v & 63]!;
    if (line.length >= 8192) {
      out.push(line);
      line = '';
    }
  }
  if (i < n) {
    const a = bytes.charCodeAt(i);
    const b = i + 1 < n ? bytes.charCodeAt(i + 1) : 0;
    const v = (a << 16) | (b << 8);
    line += B64[(v >> 18) & 63]! + B64[(v >> 12) & 63]! + (i + 1 < n ? B64[(v >> 6) & 63]! : '=') + '=';
  }
  out.push(line);
  return out.join('');
}

/** Strips what is not base64 from a base64 body, so it can be stored without decoding it. */
export function base64Clean(text: string): string {
  return text.replace(/[^A-Za-z0-9+/=]/g, '');
}

/** Bytes a clean base64 text stands for. */
export function base64Size(clean: string): number {
  // Trailing padding counted by hand: `/=+$/` retries from every `=` of a long run (quadratic).
  let end = clean.length;
  while (end > 0 && clean.charCodeAt(end - 1) === 61) end--;
  return Math.floor((end * 3) / 4);
}

/** Quoted-printable (RFC 2045 6.7): soft line breaks dropped, `=XX` decoded, bad escapes kept as written. */
export function quotedPrintableDecode(text: string): string {
  return text
    // Trailing white space before a line break is dropped. A match may only start where a run
    // starts: `/[ \t]+(?=\r?\n)/` alone would retry from each character of a run that is not
    // followed by a break, quadratic in the run's length.
    .replace(/(?<![ \t])[ \t]+(?=\r?\n)/g, '')
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The Q encoding of RFC 2047 encoded words: QP with `_` for a space. */
function qDecode(text: string): string {
  return quotedPrintableDecode(text.replace(/_/g, ' '));
}

/** UTF-8 bytes → text; a malformed sequence becomes U+FFFD, as a browser decodes it. */
export function utf8Decode(bytes: string): string {
  // Pure ASCII (the common case) needs no work.
  if (!/[\u0080-\u00ff]/.test(bytes)) return bytes;
  const out: string[] = [];
  let run = '';
  const n = bytes.length;
  for (let i = 0; i < n; ) {
    const c = bytes.charCodeAt(i);
    if (c < 0x80) {
      run += bytes[i]!;
      i++;
      continue;
    }
    let need = 0;
    let cp = 0;
    let min = 0;
    if (c >= 0xc2 && c <= 0xdf) [need, cp, min] = [1, c & 0x1f, 0x80];
    else if (c >= 0xe0 && c <= 0xef) [need, cp, min] = [2, c & 0x0f, 0x800];
    else if (c >= 0xf0 && c <= 0xf4) [need, cp, min] = [3, c & 0x07, 0x10000];
    let ok = need > 0 && i + need < n;
    if (ok) {
      for (let k = 1; k <= need; k++) {
        const d = bytes.charCodeAt(i + k);
        if ((d & 0xc0) !== 0x80) {
          ok = false;
          break;
        }
        cp = (cp << 6) | (d & 0x3f);
      }
    }
    if (!ok || cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      run += '\ufffd';
      i++;
      continue;
    }
    run += String.fromCodePoint(cp);
    i += need + 1;
    if (run.length > 4096) {
      out.push(run);
      run = '';
    }
  }
  out.push(run);
  return out.join('');
}

/** Text → UTF-8 bytes. */
export function utf8Encode(text: string): string {
  if (!/[^\u0000-\u007f]/.test(text)) return text;
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x80) out += ch;
    else if (cp < 0x800) out += String.fromCharCode(0xc0 | (cp >> 6), 0x80 | (cp & 63));
    else if (cp < 0x10000) out += String.fromCharCode(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    else out += String.fromCharCode(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
  }
  return out;
}

/** Windows-1252's 0x80..0x9F (the rest is Latin-1). */
const CP1252 = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/** Bytes in a named charset → text. Unknown charsets read as UTF-8 when valid, else Latin-1. */
export function decodeCharset(bytes: string, charset: string | undefined): string {
  const cs = (charset ?? 'us-ascii').trim().toLowerCase().replace(/^"|"$/g, '');
  if (cs === 'utf-8' || cs === 'utf8' || cs === 'us-ascii' || cs === 'ascii') return utf8Decode(bytes);
  if (cs === 'iso-8859-1' || cs === 'latin1' || cs === 'latin-1' || cs === 'iso8859-1') return bytes;
  if (cs === 'windows-1252' || cs === 'cp1252') return bytes.replace(/[\u0080-\u009f]/g, (c) => CP1252[c.charCodeAt(0) - 0x80]!);
  const asUtf8 = utf8Decode(bytes);
  return asUtf8.includes('\ufffd') ? bytes : asUtf8;
}

/**
 * Decodes RFC 2047 encoded words in a header value (`=?utf-8?B?...?=`, `=?iso-8859-1?Q?...?=`).
 * White space between two adjacent encoded words is dropped, as the RFC says. The raw value is
 * a binary string; bytes outside encoded words are read as UTF-8 (RFC 6532 headers).
 */
export function decodeWords(raw: string): string {
  const WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;
  let out = '';
  let last = 0;
  let prevWasWord = false;
  // Adjacent words of one charset are joined as bytes first: a UTF-8 character may be split across them.
  let pendingBytes = '';
  let pendingCharset = '';
  const flush = (): void => {
    if (pendingBytes !== '') out += decodeCharset(pendingBytes, pendingCharset);
    pendingBytes = '';
  };
  for (let m = WORD.exec(raw); m !== null; m = WORD.exec(raw)) {
    const between = raw.slice(last, m.index);
    const charset = m[1]!.split('*')[0]!; // RFC 2231 language suffix
    if (!(prevWasWord && /^[ \t\r\n]*$/.test(between))) {
      flush();
      out += utf8Decode(between);
    } else if (charset.toLowerCase() !== pendingCharset.toLowerCase()) {
      flush();
    }
    const bytes = m[2]!.toUpperCase() === 'B' ? base64Decode(m[3]!) : qDecode(m[3]!);
    pendingBytes += bytes;
    pendingCharset = charset;
    prevWasWord = true;
    last = m.index + m[0].length;
  }
  flush();
  out += utf8Decode(raw.slice(last));
  return out;
}
