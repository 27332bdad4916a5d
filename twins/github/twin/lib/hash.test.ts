import { execFileSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { base64Decode, base64Encode, utf8Decode, utf8Encode } from './bytes.js';
import { hmacSha256, sha1, sha256 } from '../../../../sdk/twin/codec.js';
import { gitObjectId, hubSignature256 } from './hash.js';
import { hex } from './bytes.js';

// Lengths around the 55/56/64-byte padding edges, plus bigger and non-ASCII inputs.
const samples: Uint8Array[] = [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 1000, 70_000].map((n) => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 131 + 7) & 0xff;
  return b;
});
samples.push(utf8Encode('héllo wörld — 😀 ∑'));

describe('hashes (the SDK codec, as the twin calls it)', () => {
  it('sha1 and sha256 equal Node crypto on every padding edge', () => {
    for (const s of samples) {
      expect(hex(sha1(s))).toBe(createHash('sha1').update(s).digest('hex'));
      expect(hex(sha256(s))).toBe(createHash('sha256').update(s).digest('hex'));
    }
  });

  it('hmac-sha256 equals Node crypto, short and long keys', () => {
    for (const key of ['k', 'x'.repeat(64), 'y'.repeat(100)]) {
      for (const s of samples.slice(0, 6)) {
        expect(hex(hmacSha256(utf8Encode(key), s))).toBe(createHmac('sha256', key).update(s).digest('hex'));
      }
    }
    const body = '{"zen":"Keep it logically awesome."}';
    expect(hubSignature256('s3cret', body)).toBe('sha256=' + createHmac('sha256', 's3cret').update(body).digest('hex'));
  });

  it('a blob id is what `git hash-object` says', () => {
    for (const text of ['', 'hello\n', '# twin\n\nwith ünïcödé\n', 'x'.repeat(5000)]) {
      const expected = execFileSync('git', ['hash-object', '--stdin'], { input: text }).toString().trim();
      expect(gitObjectId('blob', utf8Encode(text))).toBe(expected);
    }
  });
});

describe('bytes', () => {
  it('utf8 and base64 round-trip as Buffer does', () => {
    for (const text of ['', 'a', 'ab', 'abc', 'héllo 😀', '\u0000\u007f\u0080\u07ff\u0800\uffff']) {
      const bytes = utf8Encode(text);
      expect(Buffer.from(bytes).equals(Buffer.from(text, 'utf8'))).toBe(true);
      expect(utf8Decode(bytes)).toBe(text);
      expect(base64Encode(bytes)).toBe(Buffer.from(text, 'utf8').toString('base64'));
      expect(utf8Decode(base64Decode(base64Encode(bytes)) ?? new Uint8Array())).toBe(text);
    }
  });

  it('refuses malformed base64 and reads wrapped base64', () => {
    expect(base64Decode('a$b=')).toBeUndefined();
    expect(base64Decode('a')).toBeUndefined();
    expect(utf8Decode(base64Decode('aGVs\nbG8=\n') as Uint8Array)).toBe('hello');
  });

  it('base64 of megabytes matches Buffer across its 8192-character chunks, and decodes back (padded, wrapped or not)', () => {
    let seed = 3;
    const bytes = Buffer.from(Array.from({ length: 200_003 }, () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24)));
    for (const n of [6143, 6144, 6145, 12_288, 100_000, 100_001, 200_003]) {
      const b64 = base64Encode(bytes.subarray(0, n));
      expect(b64).toBe(bytes.subarray(0, n).toString('base64'));
      expect(Buffer.from(base64Decode(b64) as Uint8Array).equals(bytes.subarray(0, n))).toBe(true);
      expect(Buffer.from(base64Decode(b64.replace(/(.{60})/g, '$1\n')) as Uint8Array).equals(bytes.subarray(0, n))).toBe(true);
    }
    // What Buffer reads too: padding left off, stray bits in the last character.
    for (const text of ['aGVsbG8', 'aGVsbA', 'QR==', 'QUJ=']) expect(Buffer.from(base64Decode(text) as Uint8Array)).toEqual(Buffer.from(text, 'base64'));
    for (const text of ['A===', '====', 'QQ=A', 'QQ==QQ==', '\u00e9AAA']) expect(base64Decode(text), text).toBeUndefined();
  });

  it('decodes a stray or broken UTF-8 byte to U+FFFD like TextDecoder', () => {
    const bad = Uint8Array.from([0x61, 0xc3, 0x28, 0xff, 0x62]);
    expect(utf8Decode(bad)).toBe(new TextDecoder().decode(bad));
  });
});
